"""A `repeat` block compiled once computes what the same layers written out
one by one compute: two models with the same parameter names, one with
`repeat 3`, one calling the layer three times, train for a few steps of two
micro-batches each, and their parameters, batch-norm statistics and losses
agree: each layer's dropout draws the masks the unrolled program draws.

    python3 check_repeat_unrolled.py WORKDIR
"""
import os
import sys

import numpy as np

from sinter_testing import (check_close, compile_program, read_safetensors,
                            run, test_seed)

LAYER = """import "std/nn.sn"
def layer(x) {
  h = linear(layer_norm(x, name="ln"), 16, name="fc")
  h = dropout(relu(batch_norm(h, name="bn")), 0.25)
  return x + linear(h, 8, name="proj")
}
"""

REPEATED = LAYER + """
model m {
  input x: f32[B, 8]
  input y: i32[B]
  h = x
  repeat 3 as i scope "blk" {
    h = layer(h, name="")
  }
  loss cross_entropy(linear(h, 5, name="head"), y, reduction="mean")
}
"""

UNROLLED = LAYER + """
model m {
  input x: f32[B, 8]
  input y: i32[B]
  h = layer(x, name="blk.0")
  h = layer(h, name="blk.1")
  h = layer(h, name="blk.2")
  loss cross_entropy(linear(h, 5, name="head"), y, reduction="mean")
}
"""

CONFIG = """batch { global: 16 micro: 8 }
optimizer { adamw { lr: 1e-2 weight_decay: 0.1 } }
data { train { npy { input: "x" path: "x.npy" } npy { input: "y" path: "y.npy" } } shuffle: false }
steps: 6
log { every: 1 }
seed: 3
"""


def train(workdir, name, source, x, y):
    work = os.path.join(workdir, name)
    os.makedirs(work, exist_ok=True)
    np.save(os.path.join(work, "x.npy"), x)
    np.save(os.path.join(work, "y.npy"), y)
    prog = compile_program(work, source, CONFIG)
    path = os.path.join(work, "final.safetensors")
    out = run([prog, "--save", path], cwd=work)
    losses = [float(line.split()[3]) for line in out.splitlines()
              if line.startswith("step ")]
    return read_safetensors(path), np.array(losses)


def check_one_block(workdir):
    """The repeated model is one block that three calls share."""
    graph = run(["sinterc", "--config",
                 os.path.join(workdir, "repeated", "train.pbtxt"), "--emit=graph"])
    blocks = graph.count("func.func private @m.blk(")
    calls = graph.count("func.call @m.blk(")
    if (blocks, calls) != (1, 3):
        sys.exit(f"FAIL: {blocks} blocks and {calls} calls, expected 1 and 3")


def main():
    workdir = sys.argv[1]
    seed = test_seed(sys.argv, 2)
    print(f"seed {seed}")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((32, 8)).astype(np.float32)
    y = rng.integers(0, 5, 32).astype(np.int32)
    repeated, loss_r = train(workdir, "repeated", REPEATED, x, y)
    unrolled, loss_u = train(workdir, "unrolled", UNROLLED, x, y)
    check_one_block(workdir)
    if sorted(repeated) != sorted(unrolled):
        sys.exit(f"FAIL: different tensors: {sorted(set(repeated) ^ set(unrolled))}")
    if len(loss_r) != 6:
        sys.exit(f"FAIL: {len(loss_r)} logged steps, expected 6")
    worst = check_close("losses", loss_r, loss_u, 1e-6)
    for name in sorted(repeated):
        worst = max(worst, check_close(name, repeated[name], unrolled[name], 1e-6))
    print(f"{len(repeated)} tensors and 6 losses agree (worst relative "
          f"difference {worst:.1e})")


if __name__ == "__main__":
    main()
