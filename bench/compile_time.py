"""Compile time and peak memory of sinterc, from source to program, for GPT
shapes at growing depth: GPT-2 124M's width (768) at 2, 12, 24 and 48
layers, and GPT-2 XL (48 layers of width 1600, 25 heads). Context 1024,
vocabulary 50257, AdamW: examples/gpt/gpt124m.pbtxt with `set` overrides.

    scripts/bench.sh compile [--build DIR] [--timing]

Prints seconds, CPU seconds and peak resident memory per model, and the
ratios that show whether compile time is linear in depth. --timing also
prints sinterc's own stage table for each model. Nothing is asserted.
"""
import os
import subprocess
import sys
import tempfile
import time

from sinter_build import ROOT, idle_warning, sinterc_of, take_build_dir

CONFIG = os.path.join(ROOT, "examples/gpt/gpt124m.pbtxt")
# name, layers, width, heads
SHAPES = [
    ("gpt 2x768", 2, 768, 12),
    ("gpt 12x768 (GPT-2 124M)", 12, 768, 12),
    ("gpt 24x768", 24, 768, 12),
    ("gpt 48x768", 48, 768, 12),
    ("gpt 48x1600 (GPT-2 XL)", 48, 1600, 25),
]


def compile_once(sinterc, layers, width, heads, out, timing):
    """Wall seconds, CPU seconds and peak RSS (MiB) of one sinterc run."""
    args = [sinterc, "--config", CONFIG, "-o", out,
            "--set", f"set.layers={layers}", "--set", f"set.dim={width}",
            "--set", f"set.heads={heads}"]
    if timing:
        args.append("--timing")
    start = time.perf_counter()
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    report = proc.stderr.read()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"sinterc failed for {layers} layers of width {width}:\n{report}")
    if timing:
        print(report, file=sys.stderr)
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024


def main():
    args = sys.argv[1:]
    build = take_build_dir(args)
    timing = "--timing" in args
    sinterc = sinterc_of(build)
    idle_warning()
    print(f"sinterc: {sinterc} ({os.cpu_count()} cores)")
    print(f"{'model':26} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9}")
    walls = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, layers, width, heads in SHAPES:
            wall, cpu, peak = compile_once(sinterc, layers, width, heads,
                                           os.path.join(tmp, "prog"), timing)
            walls[(layers, width)] = wall
            print(f"{name:26} {wall:8.1f} {cpu:8.1f} {peak:9.0f}", flush=True)
    print(f"48 / 12 layers (width 768): {walls[(48, 768)] / walls[(12, 768)]:.2f}x"
          " (linear in depth: 4x)")
    print(f"24 / 12 layers (width 768): {walls[(24, 768)] / walls[(12, 768)]:.2f}x"
          " (linear in depth: 2x)")


if __name__ == "__main__":
    main()
