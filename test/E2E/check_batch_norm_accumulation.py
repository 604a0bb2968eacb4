"""Batch-norm under accumulation (DOMAIN.md 4): sinterc warns in LOCAL mode
when a step has several micro-batches, and the running statistics move once
per step, to the mean of the micro-batches' statistics.

    python3 check_batch_norm_accumulation.py WORKDIR
"""
import os
import subprocess
import sys

import numpy as np

from sinter_testing import compile_program, read_safetensors, run

C, G, K, STEPS = 3, 16, 4, 3
SOURCE = f"""import "std/nn.sn"
model bn {{
  input x: f32[B, {C}]
  h = batch_norm(x, name="bn")
  loss mean(h * h)
}}
"""


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((G * STEPS, C)) * [1.0, 2.0, 0.5] + [0.0, 1.0, -2.0]).astype(np.float32)
    np.save(os.path.join(work, "x.npy"), x)
    config = (f"batch {{ global: {G} micro: {G // K} }}\n"
              f'data {{ train {{ npy {{ input: "x" path: "{work}/x.npy" }} }} shuffle: false }}\n'
              f"optimizer {{ sgd {{ lr: 1e-9 }} }}\nsteps: {STEPS}\nlog {{ every: 1 }}\neval {{ every: 0 }}\n"
              f'checkpoint {{ dir: "{work}/ck" }}\n')
    with open(os.path.join(work, "model.sn"), "w") as f:
        f.write(SOURCE)
    with open(os.path.join(work, "train.pbtxt"), "w") as f:
        f.write('model: "model.sn"\n' + config)
    built = subprocess.run(["sinterc", "--config", os.path.join(work, "train.pbtxt"),
                            "-o", os.path.join(work, "prog")],
                           capture_output=True, text=True)
    if built.returncode != 0:
        sys.exit(f"FAIL: sinterc: {built.stderr}")
    sys.stdout.write(built.stderr)
    run([os.path.join(work, "prog"), "--config", os.path.join(work, "train.pbtxt")])
    state = read_safetensors(os.path.join(work, "ck", f"step-{STEPS}.safetensors"))

    # The reference: per step, each micro-batch's mean and unbiased variance,
    # averaged over the K micro-batches, then one momentum update.
    mean, var = np.zeros(C), np.ones(C)
    b = G // K
    for j in range(STEPS):
        micro = x[j * G:(j + 1) * G].astype(np.float64).reshape(K, b, C)
        mean = 0.9 * mean + 0.1 * micro.mean(1).mean(0)
        var = 0.9 * var + 0.1 * micro.var(1, ddof=1).mean(0)
    tracked = int(state["bn.num_batches_tracked"])
    if tracked != STEPS:
        sys.exit(f"FAIL: num_batches_tracked is {tracked} after {STEPS} steps of {K} micro-batches")
    for name, want in (("bn.running_mean", mean), ("bn.running_var", var)):
        err = np.max(np.abs(state[name] - want)) / np.max(np.abs(want))
        if err > 1e-5:
            sys.exit(f"FAIL: {name} {state[name]} != {want} (error {err:.1e})")
    print(f"running statistics: {STEPS} updates in {STEPS} steps of {K} micro-batches, "
          "each to the mean of the micro-batches' statistics")


if __name__ == "__main__":
    main()
