"""What the benchmarks that time a Sinter build share: which build to time,
and a warning when the machine is not idle."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def take_build_dir(args):
    """The build folder named by `--build DIR` (removed from args), or
    build/ at the root of the repository."""
    if "--build" not in args:
        return os.path.join(ROOT, "build")
    i = args.index("--build")
    build = os.path.abspath(args[i + 1])
    del args[i:i + 2]
    return build


def take_models(args, known, default):
    """The names given by `--models a,b` (removed from args), in the order
    given; exits naming any that `known` lacks. Without the flag, default."""
    if "--models" not in args:
        return list(default)
    i = args.index("--models")
    names = args[i + 1].split(",")
    del args[i:i + 2]
    unknown = [n for n in names if n not in known]
    if unknown:
        sys.exit(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    return names


def idle_warning():
    """On 2 cores one busy core skews a timing several times over."""
    load = os.getloadavg()[0]
    if load > 0.5:
        print(f"warning: load average {load:.2f}: the machine is not idle, "
              "timings are skewed", file=sys.stderr)


def sinterc_of(build):
    """The build's sinterc; exits with a message when it was not built."""
    sinterc = os.path.join(build, "bin", "sinterc")
    if not os.path.exists(sinterc):
        sys.exit(f"no sinterc at {sinterc}: build it first (scripts/build.sh)")
    return sinterc
