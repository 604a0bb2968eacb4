"""What GPT-2 124M's CUDA step asks of memory, counted from the compiler's
output (no GPU needed, nothing timed): for each function of the step
(`sinterc --emit=gpu`), its kernel launches and the bytes of the buffers
they are given. Each buffer argument counts once, as if read or written
whole (a slice passed as its buffer's base pointer counts as the slice):
an estimate of the traffic of the generated kernels, without the library
calls (matmuls, attention). bf16, T=1024, micro-batch 16.

    scripts/bench.sh gpu-traffic [--build DIR] [--kernels FUNCTION] [--set K=V]...

--set K=V adds a setting (for example precision.activations=BF16).
--kernels FUNCTION lists that function's launches in order, with their
blocks and buffer types (for example gpt.h.bwd, a layer's backward pass).

A micro-batch's total follows: the step's micro-batch loop body, each call
of a layer's forward or backward function counted with that function's
kernels. A kernel that gathers a few elements of a large buffer (the
loss's logit at each target, 3.3 GB listed) counts that buffer whole.
"""
import os
import re
import subprocess
import sys
import tempfile
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sinter_build import ROOT, sinterc_of, take_build_dir  # noqa: E402

CONFIG = os.path.join(ROOT, "examples/gpt/gpt124m.pbtxt")
SETTINGS = ["device=CUDA", "precision.compute=BF16", "batch.micro=16"]
BYTES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "bf16": 2, "f16": 2, "i8": 1, "i1": 1}
MEMREF = re.compile(r"memref<((?:\d+x)*)(f64|i64|f32|i32|bf16|f16|i8|i1)>")
FUNC = re.compile(r"\s*func\.func (?:private )?@([\w.]+)\(")
LAUNCH = re.compile(r"@sinter_kernels::@(\w+) blocks in \(%c(\d+)")
CALL = re.compile(r"call @([\w.]+)\(")


GPU_FUNC = re.compile(r"\s*gpu\.func @(\w+)\(")
VIEW = re.compile(r"memref\.reinterpret_cast %arg(\d+) to offset: \[[^]]*\], "
                  r"sizes: \[([\d, ]+)\].*: memref<(\w+)> to")


def buffer_bytes(buffers):
    total = 0
    for dims, element in buffers:
        count = 1
        for d in filter(None, dims.split("x")):
            count *= int(d)
        total += count * BYTES[element]
    return total


def kernel_views(lines):
    """For each kernel, the views its bare base-pointer arguments (a slice of
    a larger buffer, passed as memref<f32>) are given inside it: {kernel:
    {argument: (dims, element)}}."""
    views, kernel = {}, None
    for line in lines:
        m = GPU_FUNC.match(line)
        if m:
            kernel = m.group(1)
            views[kernel] = {}
            continue
        v = VIEW.search(line) if kernel else None
        if v:
            dims = "x".join(d.strip() for d in v.group(2).split(",")) + "x"
            views[kernel][int(v.group(1))] = (dims, v.group(3))
    return views


def launch_buffers(args_text, views):
    """The buffers of a launch, in order; a base pointer counts as the view
    its kernel reads or writes through it."""
    buffers = []
    for position, arg in enumerate(args_text.split(", %")):
        m = MEMREF.search(arg)
        if not m:
            continue
        buffers.append(views.get(position, m.groups()) if m.group(1) == "" else m.groups())
    return buffers


def main(args):
    build = take_build_dir(args)
    listed = None
    if "--kernels" in args:
        listed = args[args.index("--kernels") + 1]
    settings = SETTINGS + [args[i + 1] for i, a in enumerate(args) if a == "--set"]
    sets = [a for s in settings for a in ("--set", s)]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "step.mlir")
        subprocess.run([sinterc_of(build), "--config", CONFIG, *sets, "--emit=gpu",
                        "-o", out], check=True)
        lines = open(out).read().splitlines()
    views = kernel_views(lines)
    functions = OrderedDict()
    function = None
    for line in lines:
        m = FUNC.match(line)
        if m:
            function = m.group(1)
        if function is None:
            continue
        if "gpu.launch_func" in line:
            launch = LAUNCH.search(line)
            if not launch:  # a grid of run-time size: not counted
                print(f"warning: {function}: a launch of run-time size", file=sys.stderr)
                continue
            args_text = line.split("args(", 1)[1] if "args(" in line else ""
            buffers = launch_buffers(args_text, views.get(launch.group(1), {}))
            functions.setdefault(function, []).append(
                (launch.group(1), int(launch.group(2)), buffer_bytes(buffers), buffers))
        elif "call @sinter_cuda_" in line and function == listed:
            functions.setdefault(function, []).append(
                (line.split("call @")[1].split("(")[0], 0, 0, []))
    print("GPT-2 124M, CUDA, bf16, T=1024, micro-batch 16 (" + ", ".join(settings) + ")")
    print(f"{'function':24s} {'launches':>9s} {'buffer bytes':>14s}")
    totals = {}
    for name, launches in functions.items():
        kernels = [k for k in launches if k[1] > 0]
        totals[name] = (len(kernels), sum(k[2] for k in kernels))
        print(f"{name:24s} {totals[name][0]:9d} {totals[name][1] / 1e9:11.2f} GB")
    print_micro_batch(lines, "gpt", totals, views)
    if listed:
        print(f"\n{listed}, in order:")
        for kernel, blocks, size, buffers in functions.get(listed, []):
            if blocks == 0:
                print(f"  call {kernel}")
                continue
            shapes = ", ".join(f"{d}{e}" for d, e in buffers)
            print(f"  {kernel:20s} {blocks:7d} blocks {size / 1e6:8.1f} MB  {shapes}")


def print_micro_batch(lines, step, totals, views):
    """The step's micro-batch loop body (its scf.for that calls functions in
    `totals`): launches and bytes, each call counted with its function's."""
    function, indent, body = None, None, None
    for line in lines:
        m = FUNC.match(line)
        if m:
            function = m.group(1)
        if function != step:
            continue
        if indent is None:
            if line.lstrip().startswith("scf.for") or " = scf.for" in line:
                indent, body = len(line) - len(line.lstrip()), []
            continue
        if line.strip() == "}" and len(line) - len(line.lstrip()) == indent:
            if any(CALL.search(l) and CALL.search(l).group(1) in totals for l in body):
                break
            indent, body = None, None
            continue
        body.append(line)
    if not body:
        return
    launches, size, calls = 0, 0, OrderedDict()
    for line in body:
        launch = LAUNCH.search(line) if "gpu.launch_func" in line else None
        call = CALL.search(line)
        if launch:
            args_text = line.split("args(", 1)[1] if "args(" in line else ""
            launches += 1
            size += buffer_bytes(launch_buffers(args_text, views.get(launch.group(1), {})))
        elif call and call.group(1) in totals:
            name = call.group(1)
            calls[name] = calls.get(name, 0) + 1
            launches += totals[name][0]
            size += totals[name][1]
    called = ", ".join(f"{n} x {name}" for name, n in calls.items())
    print(f"a micro-batch ({step}'s loop body, with {called}): {launches} launches, "
          f"{size / 1e9:.2f} GB")


if __name__ == "__main__":
    main(sys.argv[1:])
