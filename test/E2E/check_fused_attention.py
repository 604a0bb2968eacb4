"""Attention spelled out (softmax of q k^T / sqrt(d), a causal `where`, then
@ v) is compiled as scaled_dot_product_attention (graph-fuse-attention): a
model written either way trains alike. (SGD: the keys' bias has a gradient
of rounding noise, softmax being blind to it, which AdamW would scale up to
full steps.)

    python3 check_fused_attention.py WORKDIR
"""
import os
import sys

import numpy as np

from sinter_testing import check_close, compile_program, read_safetensors, run

BODY = """import "std/nn.sn"
model m {
  input x: f32[B, 8, 16]
  qkv = linear(x, 48, name="qkv")
  q = transpose(reshape(slice(qkv, 2, 0, 16), [B, 8, 2, 8]), [0, 2, 1, 3])
  k = transpose(reshape(slice(qkv, 2, 16, 32), [B, 8, 2, 8]), [0, 2, 1, 3])
  v = transpose(reshape(slice(qkv, 2, 32, 48), [B, 8, 2, 8]), [0, 2, 1, 3])
  ATTENTION
  loss mean(y * y)
}
"""
BUILTIN = "y = scaled_dot_product_attention(q, k, v, causal=true)"
SPELLED = """later = reshape(arange(8), [1, 8]) > reshape(arange(8), [8, 1])
  y = softmax(where(later, -1e9, (q @ transpose(k)) / sqrt(8))) @ v"""
CONFIG = """batch { global: 4 micro: 4 }
optimizer { sgd { lr: 0.1 } }
data { train { npy { input: "x" path: "x.npy" } } shuffle: false }
steps: 5
log { every: 1 }
"""


def train(workdir, name, attention, x):
    work = os.path.join(workdir, name)
    os.makedirs(work, exist_ok=True)
    np.save(os.path.join(work, "x.npy"), x)
    prog = compile_program(work, BODY.replace("ATTENTION", attention), CONFIG)
    out = run([prog, "--save", "final.safetensors"], cwd=work)
    losses = [float(l.split()[3]) for l in out.splitlines() if l.startswith("step ")]
    return read_safetensors(os.path.join(work, "final.safetensors")), losses


def main():
    workdir = sys.argv[1]
    x = np.random.default_rng(3).standard_normal((8, 8, 16)).astype(np.float32)
    builtin, lb = train(workdir, "builtin", BUILTIN, x)
    spelled, ls = train(workdir, "spelled", SPELLED, x)
    worst = check_close("losses", ls, lb, 1e-6)
    for name in builtin:
        worst = max(worst, check_close(name, spelled[name], builtin[name], 1e-6))
    # The frontend's graph of the spelled-out model is what the pass fuses:
    # one attention op per phase, no softmax left.
    graph = os.path.join(workdir, "spelled", "graph.mlir")
    run(["sinterc", "--config", os.path.join(workdir, "spelled", "train.pbtxt"),
         "--emit=graph", "-o", graph])
    fused = run(["sinter-opt", graph, "-graph-fuse-attention", "-canonicalize"])
    if fused.count("graph.attention") != 2 or "graph.softmax" in fused:
        sys.exit("FAIL: the spelled-out attention was not fused")
    print(f"spelled-out attention trains as the builtin one (worst relative "
          f"difference {worst:.1e})")


if __name__ == "__main__":
    main()
