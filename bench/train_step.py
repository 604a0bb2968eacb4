"""Whole training steps of Sinter programs (forward, backward, gradient sum,
clipping and the optimizer's update), on synthetic data, one process:
milliseconds per step (the wall time of 1 + N steps minus that of 1 step,
over N) and compile time, for the examples and for a 124M-parameter model whose step is
dominated by the update.

    scripts/bench.sh train-step [STEPS] [--build DIR] [--only mlp,gpt_tiny]

--build times the sinterc of another build tree (for example one of an
earlier commit, for a before/after comparison) with this tree's models.
"""
import os
import subprocess
import sys
import time

from sinter_build import ROOT, idle_warning, sinterc_of, take_build_dir

MODELS = [
    ("mlp", "examples/mlp/mlp.pbtxt", ["--set", "data.train={synthetic {}}"]),
    ("resnet", "examples/resnet/resnet.pbtxt", []),
    ("gpt_tiny", "examples/gpt/gpt_tiny.pbtxt", []),
    ("wide124m", "bench/models/wide124m.pbtxt", []),
]


def main():
    args = sys.argv[1:]
    build = take_build_dir(args)
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = set(args[i + 1].split(","))
        del args[i:i + 2]
    steps = int(args[0]) if args else 20
    sinterc = sinterc_of(build)
    idle_warning()
    print(f"sinterc: {sinterc}")
    out_dir = os.path.join(build, "bench")
    os.makedirs(out_dir, exist_ok=True)
    print(f"{'model':10} {'compile s':>10} {'ms/step':>10}  (mean of {steps} steps after the first)")
    for name, config, extra in MODELS:
        if only is not None and name not in only:
            continue
        prog = os.path.join(out_dir, name)
        start = time.perf_counter()
        subprocess.run([sinterc, "--config", os.path.join(ROOT, config), "-o", prog],
                       check=True)
        compile_s = time.perf_counter() - start
        # Wall time of 1 + steps steps minus that of 1 step: start-up, data
        # and initialisation cancel out.
        def wall(n):
            begin = time.perf_counter()
            subprocess.run([prog, "--set", f"steps={n}", "--set", "log.every=1000000",
                            "--set", "eval.every=0", *extra],
                           check=True, capture_output=True, text=True,
                           cwd=out_dir)  # a stopped run's checkpoint lands there
            return time.perf_counter() - begin
        one = min(wall(1) for _ in range(2))
        ms = 1e3 * (wall(1 + steps) - one) / steps
        print(f"{name:10} {compile_s:10.1f} {ms:10.2f}")


if __name__ == "__main__":
    main()
