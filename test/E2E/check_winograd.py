"""Checks two logs of one program (test/E2E/winograd.test): DIRECT's and
WINOGRAD's, both run with DNNL_VERBOSE=1.

    python3 check_winograd.py DIRECT_LOG WINOGRAD_LOG

The WINOGRAD run's convolutions ran oneDNN's Winograd kernel in the forward
pass and both backward passes and the DIRECT run's never did (on a CPU
without AVX-512's core instructions, or with oneDNN's ISA capped below
them, the WINOGRAD run instead said it ran direct), and each step's loss is
the same within 1e-5.
"""
import os
import re
import sys

LOSS = re.compile(r"^step \d+/\d+\s+loss ([0-9.e+-]+)", re.MULTILINE)


def winograd_passes(log):
    """The passes (forward_training, backward_data, ...) that ran Winograd."""
    return {line.split(",")[5] for line in log.splitlines()
            if line.startswith("onednn_verbose,exec,") and "wino" in line}


def main():
    direct, winograd = (open(path).read() for path in sys.argv[1:3])
    with open("/proc/cpuinfo") as f:
        flags = f.read().split()
    avx512 = all(f"avx512{x}" in flags for x in ("f", "bw", "dq", "vl"))
    capped = "ONEDNN_MAX_CPU_ISA" in os.environ or "DNNL_MAX_CPU_ISA" in os.environ
    assert not winograd_passes(direct), "DIRECT ran Winograd kernels"
    if avx512 and not capped:
        passes = winograd_passes(winograd)
        want = {"forward_training", "backward_data", "backward_weights"}
        assert passes == want, f"Winograd ran in {sorted(passes)}, not {sorted(want)}"
    else:
        assert "oneDNN has no Winograd kernel on this CPU" in winograd, winograd
    a, b = LOSS.findall(direct), LOSS.findall(winograd)
    assert len(a) == 4 and len(b) == 4, (a, b)
    for step, (x, y) in enumerate(zip(a, b), 1):
        assert abs(float(x) - float(y)) <= 1e-5 * abs(float(x)), (step, x, y)
    print("winograd ok")


if __name__ == "__main__":
    main()
