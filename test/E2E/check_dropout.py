"""Dropout in training: the mask keeps 1 - p of the elements and scales them
by 1 / (1 - p); the backward pass uses the forward's mask; two dropouts draw
independent masks, and so do two micro-batches of a step; a resumed run
draws the masks of the uninterrupted one.

    python3 check_dropout.py WORKDIR
"""
import os
import sys

import numpy as np

from sinter_testing import compile_program, read_safetensors, run

N, P = 4096, 0.25
SOURCE = f"""
model drop {{
  input x: f32[B, {N}]
  param w: f32[{N}] = ones
  param v: f32[{N}] = ones
  loss sum(dropout(x * w, {P})) + sum(dropout(x * v, {P}))
}}
"""


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    row = rng.uniform(0.5, 2.0, (1, N)).astype(np.float32)
    np.save(os.path.join(work, "x.npy"), np.repeat(row, 8, axis=0))
    config = ('batch { global: 2 micro: 1 }\n'
              'data { train { npy { input: "x" path: "x.npy" } } shuffle: false }\n'
              'optimizer { sgd { lr: 1.0 } }\nlog { every: 1 }\neval { every: 0 }\n'
              'seed: 11\n')
    prog = compile_program(work, SOURCE, config)
    cfg = os.path.join(work, "train.pbtxt")

    # One micro-batch, forward and backward: d loss / d w = x * mask / (1-p).
    grads = os.path.join(work, "grads")
    out = run([prog, "--config", cfg, "--gradients", grads])
    loss = float(out.split("loss ")[1].split(",")[0])
    gw = np.load(os.path.join(grads, "w.npy"))
    gv = np.load(os.path.join(grads, "v.npy"))
    x = row[0]
    for g in (gw, gv):
        kept = g != 0
        check(abs(kept.mean() - (1 - P)) < 5 * np.sqrt(P * (1 - P) / N),
              f"kept fraction {kept.mean():.4f}, expected {1 - P}")
        check(np.allclose(g[kept], x[kept] / (1 - P), rtol=1e-6, atol=0),
              "kept gradients are not x / (1 - p)")
    # The forward used the backward's masks: with w = v = 1, the loss is the
    # sum of the gradients.
    check(abs(loss - (gw.sum() + gv.sum())) <= 1e-5 * abs(loss),
          f"loss {loss} != sum of gradients {gw.sum() + gv.sum()}")
    agree = ((gw != 0) == (gv != 0)).mean()
    check(agree < 0.75, f"two dropouts share {agree:.2%} of their mask")
    again = os.path.join(work, "grads2")
    run([prog, "--config", cfg, "--gradients", again])
    check(np.array_equal(np.load(os.path.join(again, "w.npy")), gw),
          "the same step drew a different mask")
    print(f"dropout: kept {(gw != 0).mean():.4f} of {N} (p = {P}); "
          "forward and backward masks agree; streams independent")

    # One SGD step (lr 1) over two micro-batches holding the same sample:
    # w moves by x / (1-p) times the number of masks that kept it.
    ck = os.path.join(work, "ck")
    run([prog, "--config", cfg, "--set", "steps=1", "--set", f"checkpoint.dir={ck}"])
    w = read_safetensors(os.path.join(ck, "step-1.safetensors"))["w"]
    times = np.rint((1 - w) * (1 - P) / x).astype(int)
    check(np.allclose((1 - w) * (1 - P) / x, times, atol=1e-4), "w moved by a non-multiple")
    check(set(np.unique(times)) <= {0, 1, 2}, f"kept counts {np.unique(times)}")
    once = (times == 1).mean()
    check(once > 0.25, f"micro-batches share their masks ({once:.2%} kept once)")
    print(f"micro-batches: {once:.2%} of elements kept by exactly one of two masks")

    # Resume: steps 3-4 after a checkpoint at step 2 equal the uninterrupted run.
    whole = os.path.join(work, "whole")
    run([prog, "--config", cfg, "--set", "steps=4", "--set", f"checkpoint.dir={whole}"])
    part = os.path.join(work, "part")
    run([prog, "--config", cfg, "--set", "steps=2", "--set", f"checkpoint.dir={part}"])
    run([prog, "--config", cfg, "--set", "steps=4", "--set", f"checkpoint.dir={part}",
         "--set", "checkpoint.resume=true"])
    a = read_safetensors(os.path.join(whole, "step-4.safetensors"))
    b = read_safetensors(os.path.join(part, "step-4.safetensors"))
    check(all(np.array_equal(a[k], b[k]) for k in ("w", "v")),
          "a resumed run drew different masks")
    print("resume: identical parameters after 4 steps with dropout")


if __name__ == "__main__":
    main()
