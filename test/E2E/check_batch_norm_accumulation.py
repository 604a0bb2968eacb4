"""Batch-norm under accumulation and across ranks (DOMAIN.md 4): sinterc
warns in LOCAL mode when a step has several micro-batches; the running
statistics move once per step, to the mean of the micro-batches'
statistics; with batch_norm: SYNC, two ranks of 8 samples train exactly like
one rank of 16 (statistics, running statistics and parameters), which LOCAL
mode does not.

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
  loss mean(h * h + h)
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
    check_sync(work)


def check_sync(work):
    def train(tag, micro, ranks, mode):
        cfg = os.path.join(work, tag + ".pbtxt")
        with open(cfg, "w") as f:
            f.write('model: "model.sn"\n'
                    f"batch {{ global: {G} micro: {micro} }}\n"
                    f"parallel {{ batch_norm: {mode} }}\n"
                    f'data {{ train {{ npy {{ input: "x" path: "{work}/x.npy" }} }} shuffle: false }}\n'
                    f"optimizer {{ sgd {{ lr: 0.1 }} }}\nsteps: {STEPS}\neval {{ every: 0 }}\n"
                    f'checkpoint {{ dir: "{work}/{tag}" }}\n')
        prog = os.path.join(work, tag)
        run(["sinterc", "--config", cfg, "-o", prog + ".prog"])
        run(["sinter-run", "-n", str(ranks), prog + ".prog"])
        return read_safetensors(os.path.join(work, tag, f"step-{STEPS}.safetensors"))
    names = ("bn.weight", "bn.bias", "bn.running_mean", "bn.running_var")
    whole = train("one_rank", G, 1, "LOCAL")
    sync = train("sync", G // 2, 2, "SYNC")
    local = train("local", G // 2, 2, "LOCAL")
    err = max(np.max(np.abs(sync[n] - whole[n])) / np.max(np.abs(whole[n])) for n in names)
    gap = max(np.max(np.abs(local[n] - whole[n])) / np.max(np.abs(whole[n])) for n in names)
    if err > 1e-5 or gap < 1e-3:
        sys.exit(f"FAIL: SYNC vs one rank {err:.1e}, LOCAL vs one rank {gap:.1e}")
    print(f"sync: 2 ranks x 8 vs 1 rank x 16: {err:.1e} (LOCAL mode: {gap:.1e})")


if __name__ == "__main__":
    main()
