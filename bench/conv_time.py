"""Where a conv net's CPU step goes, Sinter's against PyTorch eager's, in
one run: milliseconds per step in the convolutions' forward and backward
passes, in oneDNN's reorders, and in everything else.

    scripts/bench.sh conv-time [STEPS] [--models resnet18,cnn]

Sinter's split comes from oneDNN's own timing of each call
(ONEDNN_VERBOSE=1, steps 2 to 1 + STEPS; the backward pass split into its
data and kernel-gradient halves, and the weights' and gradients' reorders
apart; its few matmuls count as everything else, as PyTorch's do),
PyTorch's from its profiler (self time of `mkldnn_convolution` and
`convolution_backward`, which hold PyTorch's reorders). Sinter's step
time is the same run's (oneDNN's log costs it little); PyTorch's is timed
without the profiler, whose cost per operation is larger.
Timings are never asserted; run it on an idle machine.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sinter_build import ROOT, idle_warning, sinterc_of, take_build_dir, take_models  # noqa: E402
from train_vs_peers import STEP_TIME, data_setting  # noqa: E402

CONFIGS = {"resnet18": "bench/models/resnet18_b32.pbtxt",
           "resnet18-224": "bench/models/resnet18_224_b32.pbtxt",
           "cnn": "bench/models/cnn_b64.pbtxt"}
THREADS = len(os.sched_getaffinity(0))
# oneDNN's verbose line for a call: exec,cpu,KIND,IMPLEMENTATION,PROP,...,ms
EXEC = re.compile(r"^onednn_verbose,exec,cpu,(\w+),[^,]*,(\w+),.*,([0-9.]+)$",
                  re.MULTILINE)
PASSES = ["forward", "backward data", "kernel gradient", "reorders"]


def sinter_run(prog, config, steps, data, out_dir):
    env = dict(os.environ, ONEDNN_VERBOSE="1")
    return subprocess.run([prog, "--config", config, "--set", f"steps={1 + steps}",
                           "--set", "log.every=1", *data], check=True, capture_output=True,
                          text=True, cwd=out_dir, env=env).stdout


def sinter(sinterc, name, steps, out_dir):
    """(ms per step, {pass: ms per step}) of Sinter's step."""
    config = os.path.join(ROOT, CONFIGS[name])
    prog = os.path.join(out_dir, name)
    subprocess.run([sinterc, "--config", config, "-o", prog], check=True)
    data = data_setting(name, steps, out_dir)
    # One run gives both, so that the rest is not the difference of two
    # runs' noise. The calls logged between the first step's line and the
    # last's are steps 2 to 1 + steps (oneDNN and the step log share
    # stdout, in order).
    log = sinter_run(prog, config, steps, data, out_dir)
    times = [float(v) * (1e3 if unit == "s" else 1.0) for v, unit in STEP_TIME.findall(log)]
    first, last = f"\nstep 1/{1 + steps} ", f"\nstep {1 + steps}/{1 + steps} "
    if first not in log or last not in log:
        sys.exit(f"{name}: the verbose run did not log steps 1 and {1 + steps}")
    calls = EXEC.findall(log[log.index(first):log.index(last)])
    if not calls:
        sys.exit(f"{name}: no oneDNN calls logged (ONEDNN_VERBOSE)")
    split = dict.fromkeys(PASSES, 0.0)
    for kind, prop, ms in calls:
        if kind not in ("reorder", "convolution"):
            continue  # matmuls: everything else, as in PyTorch's column
        key = ("reorders" if kind == "reorder" else
               "forward" if prop.startswith("forward") else
               "backward data" if prop == "backward_data" else "kernel gradient")
        split[key] += float(ms) / steps
    return statistics.median(times[1:]), split


def pytorch(name, steps):
    """(ms per step, {pass: ms per step}) of PyTorch eager's step."""
    import numpy as np
    from torch.profiler import ProfilerActivity, profile
    import peer_step
    step = peer_step.torch_step(name, False, THREADS, peer_step.batch(
        name, np.random.default_rng(0)), False)
    _, ms = peer_step.timed(step, steps)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
    self_ms = {e.key: e.self_cpu_time_total / 1e3 / steps for e in prof.key_averages()}
    missing = [op for op in ("aten::mkldnn_convolution", "aten::convolution_backward")
               if not self_ms.get(op)]
    if missing:
        sys.exit(f"{name}: PyTorch's profile has no time in {', '.join(missing)}")
    backward = self_ms["aten::convolution_backward"]
    split = {"forward": self_ms["aten::mkldnn_convolution"],
             "backward data": None, "kernel gradient": None, "reorders": None,
             "backward (data and kernel)": backward}
    return ms, split


def cell(v):
    return f"{v:9.1f}" if v is not None else "        -"


def main():
    args = sys.argv[1:]
    build = take_build_dir(args)
    models = take_models(args, list(CONFIGS), ["resnet18", "cnn"])
    steps = int(args[0]) if args else 5
    sinterc = sinterc_of(build)
    idle_warning()
    print(f"ms per step, {THREADS} threads, f32, {steps} steps after the first")
    with tempfile.TemporaryDirectory() as out_dir:
        for name in models:
            s_ms, s = sinter(sinterc, name, steps, out_dir)
            p_ms, p = pytorch(name, steps)
            s["backward (data and kernel)"] = s["backward data"] + s["kernel gradient"]
            rows = PASSES + ["backward (data and kernel)"]
            print(f"\n{name:28s}   sinter   pytorch")
            for row in rows:
                print(f"  {row:26s}{cell(s.get(row))} {cell(p.get(row))}")
            s_conv = s["forward"] + s["backward (data and kernel)"] + s["reorders"]
            p_conv = p["forward"] + p["backward (data and kernel)"]
            print(f"  {'convolutions, all':26s}{cell(s_conv)} {cell(p_conv)}"
                  f"   ratio {s_conv / p_conv:.2f}")
            print(f"  {'everything else':26s}{cell(s_ms - s_conv)}"
                  f" {cell(p_ms - p_conv)}")
            print(f"  {'step':26s}{cell(s_ms)} {cell(p_ms)}   ratio {s_ms / p_ms:.2f}")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"\n({time.perf_counter() - start:.0f} s)")
