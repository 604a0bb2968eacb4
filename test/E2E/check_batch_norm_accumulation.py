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

from sinter_testing import read_safetensors, relative_error, run

C, G, K, STEPS = 3, 16, 4, 3
SOURCE = f"""import "std/nn.sn"
model bn {{
  input x: f32[B, {C}]
  h = batch_norm(x, name="bn")
  loss mean(h * h + h)
}}
"""
# The same, twice, as a repeated block: its batch-norms sync as well.
REPEATED = f"""import "std/nn.sn"
model bn {{
  input x: f32[B, {C}]
  h = x
  repeat 2 scope "blk" {{
    h = batch_norm(h, name="bn")
  }}
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
    with open(os.path.join(work, "repeated.sn"), "w") as f:
        f.write(REPEATED)

    def train(tag, micro, ranks, mode, model="model.sn"):
        cfg = os.path.join(work, tag + ".pbtxt")
        with open(cfg, "w") as f:
            f.write(f'model: "{model}"\n'
                    f"batch {{ global: {G} micro: {micro} }}\n"
                    f"parallel {{ batch_norm: {mode} }}\n"
                    f'data {{ train {{ npy {{ input: "x" path: "{work}/x.npy" }} }} shuffle: false }}\n'
                    f"optimizer {{ sgd {{ lr: 0.1 }} }}\nsteps: {STEPS}\neval {{ every: 0 }}\n"
                    f'checkpoint {{ dir: "{work}/{tag}" }}\n')
        prog = os.path.join(work, tag)
        run(["sinterc", "--config", cfg, "-o", prog + ".prog"])
        run(["sinter-run", "-n", str(ranks), prog + ".prog"])
        return read_safetensors(os.path.join(work, tag, f"step-{STEPS}.safetensors"))
    fields = ("weight", "bias", "running_mean", "running_var")
    for label, model, scopes in (("sync", "model.sn", ["bn"]),
                                 ("sync in a repeated block", "repeated.sn",
                                  ["blk.0.bn", "blk.1.bn"])):
        names = [f"{scope}.{field}" for scope in scopes for field in fields]
        whole = train(model + ".one_rank", G, 1, "LOCAL", model)
        sync = train(model + ".sync", G // 2, 2, "SYNC", model)
        local = train(model + ".local", G // 2, 2, "LOCAL", model)
        # Over all the tensors at once: a bias that batch-norm after it keeps
        # at zero has no scale of its own.
        def flat(tensors):
            return np.concatenate([tensors[n].ravel() for n in names])
        err = relative_error(flat(sync), flat(whole))
        gap = relative_error(flat(local), flat(whole))
        if err > 1e-5 or gap < 1e-3:
            sys.exit(f"FAIL: {label}: SYNC vs one rank {err:.1e}, LOCAL vs one rank {gap:.1e}")
        print(f"{label}: 2 ranks x 8 vs 1 rank x 16: {err:.1e} (LOCAL mode: {gap:.1e})")


if __name__ == "__main__":
    main()
