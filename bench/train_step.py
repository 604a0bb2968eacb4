"""Whole training steps of Sinter programs (forward, backward, gradient sum,
clipping and the optimizer's update), on synthetic data, one process:
milliseconds per step (median over the logged steps after the first) and
compile time, for the examples and for a 124M-parameter model whose step is
dominated by the update.

    scripts/bench.sh train-step [STEPS]
"""
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SINTERC = os.path.join(ROOT, "build", "bin", "sinterc")
MODELS = [
    ("mlp", "examples/mlp/mlp.pbtxt", ["--set", "data.train={synthetic {}}"]),
    ("resnet", "examples/resnet/resnet.pbtxt", []),
    ("gpt_tiny", "examples/gpt/gpt_tiny.pbtxt", []),
    ("wide124m", "bench/models/wide124m.pbtxt", []),
]
LINE = re.compile(r"^step (\d+)/\d+ .* ([0-9.]+) samples/s")


def idle_warning():
    load = os.getloadavg()[0]
    if load > 0.5:
        print(f"warning: load average {load:.2f}: the machine is not idle, "
              "timings are skewed", file=sys.stderr)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    idle_warning()
    out_dir = os.path.join(ROOT, "build", "bench")
    os.makedirs(out_dir, exist_ok=True)
    print(f"{'model':10} {'compile s':>10} {'ms/step':>10}  (median of {steps - 1} steps)")
    for name, config, extra in MODELS:
        prog = os.path.join(out_dir, name)
        start = time.perf_counter()
        subprocess.run([SINTERC, "--config", os.path.join(ROOT, config), "-o", prog],
                       check=True)
        compile_s = time.perf_counter() - start
        run = subprocess.run([prog, "--set", f"steps={steps}", "--set", "log.every=1",
                              "--set", "eval.every=0", *extra],
                             check=True, capture_output=True, text=True)
        batch = None
        times = []
        for line in run.stdout.splitlines():
            m = LINE.match(line)
            if m and int(m.group(1)) > 1:  # the first step warms up
                times.append(float(m.group(2)))
            if "micro-batches of" in line:
                micro = re.search(r"(\d+) micro-batches of (\d+)", line)
                batch = int(micro.group(1)) * int(micro.group(2))
        ms = statistics.median(1e3 * batch / t for t in times)
        print(f"{name:10} {compile_s:10.1f} {ms:10.2f}")


if __name__ == "__main__":
    main()
