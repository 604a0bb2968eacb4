"""Compile time and peak memory of sinterc, from source to program, for GPT
shapes at growing depth: GPT-2 124M's width (768) at 2, 12, 24, 48 and 96
layers, the same with the attention spelled out from primitives
(bench/models/gpt_spelled.sn), and GPT-2 XL (48 layers of width 1600, 25
heads). Context 1024, vocabulary 50257, AdamW: examples/gpt/gpt124m.pbtxt
with `set` overrides.

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
GPT = os.path.join(ROOT, "examples/gpt/gpt.sn")
SPELLED = os.path.join(ROOT, "bench/models/gpt_spelled.sn")
# name, model, layers, width, heads
SHAPES = [
    ("gpt 2x768", GPT, 2, 768, 12),
    ("gpt 12x768 (GPT-2 124M)", GPT, 12, 768, 12),
    ("gpt 24x768", GPT, 24, 768, 12),
    ("gpt 48x768", GPT, 48, 768, 12),
    ("gpt 96x768", GPT, 96, 768, 12),
    ("spelled 12x768", SPELLED, 12, 768, 12),
    ("spelled 24x768", SPELLED, 24, 768, 12),
    ("spelled 48x768", SPELLED, 48, 768, 12),
    ("spelled 96x768", SPELLED, 96, 768, 12),
    ("gpt 48x1600 (GPT-2 XL)", GPT, 48, 1600, 25),
]


def compile_once(sinterc, model, layers, width, heads, out, timing):
    """Wall seconds, CPU seconds and peak RSS (MiB) of one sinterc run."""
    args = [sinterc, "--config", CONFIG, "-o", out, "--set", f"model={model}",
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
        for name, model, layers, width, heads in SHAPES:
            wall, cpu, peak = compile_once(sinterc, model, layers, width, heads,
                                           os.path.join(tmp, "prog"), timing)
            walls[(model, layers, width)] = wall
            print(f"{name:26} {wall:8.1f} {cpu:8.1f} {peak:9.0f}", flush=True)
    for model, label in ((GPT, "gpt"), (SPELLED, "spelled")):
        for deep, linear in ((24, "2x"), (48, "4x"), (96, "8x")):
            ratio = walls[(model, deep, 768)] / walls[(model, 12, 768)]
            print(f"{label} {deep} / 12 layers (width 768): {ratio:.2f}x "
                  f"(linear in depth: {linear})")


if __name__ == "__main__":
    main()
