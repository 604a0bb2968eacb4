"""Gradient accumulation is exact (DOMAIN.md 2): with the global batch fixed
at G = 16, k = 1, 2, 4 and 8 micro-batches per step give the same parameters
after 20 SGD steps, within 1e-5 relative, for

  - a mean loss (cross_entropy, reduction "mean"),
  - a sum loss plus a mean: mse_loss(..., reduction="sum") + 0.5 * mean(p * p),
  - a token mean with ignore_index, where micro-batches hold different
    numbers of valid tokens (some none at all).

Each run also matches a float64 NumPy implementation of the step over the
global batch, and the test shows that the usual mistake (averaging the
per-micro-batch losses) would have moved the parameters much further than
the tolerance: the test can fail.

    python3 check_accumulation.py WORKDIR
"""
import os
import sys

import numpy as np

from sinter_testing import compile_program, read_safetensors, relative_error, run, write_safetensors

G, STEPS, LR, MOMENTUM = 16, 20, 0.1, 0.9
N = G * STEPS  # no shuffling: step j takes samples [jG, (j+1)G)
F, C, T, O = 6, 4, 5, 3
TOL = 1e-5

MODELS = {
    "mean": f"""
model m {{
  input x: f32[B, {F}]
  input y: i32[B]
  param w: f32[{C}, {F}] = normal(0.0, 0.3)
  param b: f32[{C}] = zeros
  loss cross_entropy(x @ transpose(w) + b, y)
}}
""",
    "sum_and_mean": f"""
model m {{
  input x: f32[B, {F}]
  input y: f32[B, {O}]
  param w: f32[{O}, {F}] = normal(0.0, 0.3)
  p = x @ transpose(w)
  loss mse_loss(p, y, reduction="sum") + 0.5 * mean(p * p)
}}
""",
    "token_mean": f"""
model m {{
  input x: f32[B, {T}, {F}]
  input t: i32[B, {T}]
  param w: f32[{C}, {F}] = normal(0.0, 0.3)
  loss cross_entropy(x @ transpose(w), t, ignore_index=-1)
}}
""",
}


def softmax_ce_grad(logits, target, ignore=None):
    """d sum_i CE_i / d logits (rows with target == ignore get none)."""
    z = logits - logits.max(-1, keepdims=True)
    p = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    valid = np.ones(target.shape, bool) if ignore is None else target != ignore
    onehot = np.zeros_like(p)
    idx = np.where(valid, target, 0)
    np.put_along_axis(onehot, idx[..., None], 1.0, axis=-1)
    return (p - onehot) * valid[..., None]


def gradients(kind, params, data, scale):
    """The gradient of one batch's loss terms: means divided by
    scale["samples"] or scale["tokens"] instead of their own denominators,
    sums multiplied by scale["sum"]."""
    x = data["x"]
    if kind == "mean":
        d = softmax_ce_grad(x @ params["w"].T + params["b"], data["y"]) / scale["samples"]
        return {"w": d.T @ x, "b": d.sum(0)}
    if kind == "sum_and_mean":
        p = x @ params["w"].T
        d = 2 * (p - data["y"]) * scale["sum"] + 0.5 * 2 * p / (scale["samples"] * O)
        return {"w": d.T @ x}
    d = softmax_ce_grad(x @ params["w"].T, data["t"], ignore=-1) / scale["tokens"]
    return {"w": np.einsum("btc,btf->cf", d, x)}


def sgd(kind, params, data, k, naive):
    """STEPS of SGD with momentum over the global batches. `naive` averages
    the k micro-batches' own mean losses instead (the usual mistake)."""
    params = {n: v.astype(np.float64) for n, v in params.items()}
    velocity = {n: np.zeros_like(v) for n, v in params.items()}
    b = G // k
    for j in range(STEPS):
        batch = {n: v[j * G:(j + 1) * G] for n, v in data.items()}
        total = {n: np.zeros_like(v) for n, v in params.items()}
        for m in range(k):
            micro = {n: v[m * b:(m + 1) * b] for n, v in batch.items()}
            if naive:  # the mean over k of each micro-batch's own loss
                scale = {"samples": b * k, "sum": 1 / k,
                         "tokens": max((micro["t"] != -1).sum(), 1) * k if "t" in micro else 1}
            else:
                scale = {"samples": G, "sum": 1,
                         "tokens": (batch["t"] != -1).sum() if "t" in batch else 1}
            for n, g in gradients(kind, params, micro, scale).items():
                total[n] += g
        for n in params:
            velocity[n] = MOMENTUM * velocity[n] + total[n]
            params[n] = params[n] - LR * velocity[n]
    return params


def make_data(kind, rng):
    if kind == "token_mean":
        x = rng.standard_normal((N, T, F)).astype(np.float32)
        t = rng.integers(0, C, (N, T)).astype(np.int32)
        # Sample i keeps its first (i * 7) % (T + 1) targets: 0 to T valid
        # tokens, so micro-batches of one step hold different counts.
        for i in range(N):
            t[i, (i * 7) % (T + 1):] = -1
        return {"x": x, "t": t}
    x = rng.standard_normal((N, F)).astype(np.float32)
    if kind == "mean":
        return {"x": x, "y": rng.integers(0, C, N).astype(np.int32)}
    return {"x": x, "y": rng.standard_normal((N, O)).astype(np.float32)}


def main():
    work = sys.argv[1]
    rng = np.random.default_rng(3)
    for kind, source in MODELS.items():
        base = os.path.join(work, kind)
        os.makedirs(base, exist_ok=True)
        data = make_data(kind, rng)
        feeds = ""
        for name, array in data.items():
            np.save(os.path.join(base, f"{name}.npy"), array)
            feeds += f'npy {{ input: "{name}" path: "{base}/{name}.npy" }} '
        init = {"w": (rng.standard_normal((C if kind != "sum_and_mean" else O, F)) * 0.3).astype(np.float32)}
        if kind == "mean":
            init["b"] = (rng.standard_normal(C) * 0.1).astype(np.float32)
        init_path = os.path.join(base, "init.safetensors")
        write_safetensors(init_path, init)
        exact = sgd(kind, init, data, 1, naive=False)
        results = {}
        for k in (1, 2, 4, 8):
            config = (f"batch {{ global: {G} micro: {G // k} }}\n"
                      f"data {{ train {{ {feeds}}} shuffle: false }}\n"
                      f"optimizer {{ sgd {{ lr: {LR} momentum: {MOMENTUM} }} }}\n"
                      f"steps: {STEPS}\nlog {{ every: {STEPS} }}\neval {{ every: 0 }}\n"
                      f'checkpoint {{ dir: "{base}/ck{k}" }}\n')
            prog = compile_program(os.path.join(base, f"k{k}"), source, config)
            run([prog, "--config", os.path.join(base, f"k{k}", "train.pbtxt"),
                 "--init", init_path])
            results[k] = read_safetensors(os.path.join(base, f"ck{k}", f"step-{STEPS}.safetensors"))
        worst_k = max(relative_error(results[k][n], results[1][n])
                      for k in (2, 4, 8) for n in init)
        worst_ref = max(relative_error(results[k][n], exact[n])
                        for k in (1, 2, 4, 8) for n in init)
        naive = sgd(kind, init, data, 4, naive=True)
        naive_gap = max(relative_error(naive[n], exact[n]) for n in init)
        print(f"{kind}: k = 2, 4, 8 vs k = 1: {worst_k:.1e}; vs float64 reference: "
              f"{worst_ref:.1e}; averaging micro-batch losses (k = 4) would be off by "
              f"{naive_gap:.1e}")
        if worst_k > TOL or worst_ref > TOL:
            sys.exit(f"FAIL: {kind}: accumulation is not exact "
                     f"({worst_k:.2e} across k, {worst_ref:.2e} against the reference)")
        if kind != "mean" and naive_gap < 100 * TOL:
            sys.exit(f"FAIL: {kind}: the naive reference is too close ({naive_gap:.1e}) "
                     "for the test to tell them apart")
    print(f"accumulation: k in 1, 2, 4, 8 gives the step over the global batch of {G}")
    check_lr_scaling(work)


def check_lr_scaling(work):
    """lr_scaling: LINEAR from a base of G/2 and SQRT from G/4 both double
    the written rate; the log says so, and the run equals one with the
    doubled rate written out."""
    base = os.path.join(work, "mean")
    feeds = (f'npy {{ input: "x" path: "{base}/x.npy" }} '
             f'npy {{ input: "y" path: "{base}/y.npy" }}')
    def train(name, lr, scaling):
        config = (f"batch {{ global: {G} micro: {G} }}\n"
                  f"data {{ train {{ {feeds} }} shuffle: false }}\n"
                  f"optimizer {{ sgd {{ lr: {lr} momentum: {MOMENTUM} }} }}\n{scaling}"
                  f"steps: 5\nlog {{ every: 5 }}\neval {{ every: 0 }}\n"
                  f'checkpoint {{ dir: "{base}/{name}" }}\n')
        prog = compile_program(os.path.join(base, name + "_prog"), MODELS["mean"], config)
        out = run([prog, "--config", os.path.join(base, name + "_prog", "train.pbtxt"),
                   "--init", os.path.join(base, "init.safetensors")])
        return out, read_safetensors(os.path.join(base, name, "step-5.safetensors"))
    _, written = train("lr_written", 2 * LR, "")
    for rule, base_batch in (("LINEAR", G // 2), ("SQRT", G // 4)):
        out, scaled = train("lr_" + rule.lower(), LR,
                            f"lr_scaling {{ rule: {rule} base_global_batch: {base_batch} }}\n")
        line = next(l for l in out.splitlines() if l.startswith("learning rate"))
        print(line)
        if not all(np.array_equal(scaled[n], written[n]) for n in written):
            sys.exit(f"FAIL: lr_scaling {rule} did not train with twice the rate")
    print("lr_scaling: LINEAR and SQRT runs equal the run with the scaled rate written out")


if __name__ == "__main__":
    main()
