"""Every operation and loss of LANGUAGE.md section 7, compiled and run on
random inputs (fresh each run), against NumPy in float64, for f32 and f64.

    python3 check_ops.py WORKDIR [SEED]

Each case is an `output` of one model per dtype, so every element of every
result is compared. Tolerances: relative error 1e-5 for f32, 1e-12 for f64.
"""
import math
import os
import sys

import numpy as np

from sinter_testing import (check_close, compile_program, run_eval, test_seed,
                            write_safetensors)

B = 4
erf = np.vectorize(math.erf)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def conv2d(x, w, stride, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out


def pool(x, k, stride, pad, fn, fill):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=fill)
    n, c, h, w = x.shape
    oh, ow = (h - k) // stride + 1, (w - k) // stride + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = fn(x[:, :, i * stride:i * stride + k,
                                   j * stride:j * stride + k], axis=(2, 3))
    return out


def attention(q, k, v, causal):
    s = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        L, S = s.shape[-2], s.shape[-1]
        s = np.where(np.arange(S)[None, :] > np.arange(L)[:, None], -np.inf, s)
    return softmax(s) @ v


def cross_entropy(logits, t, reduction="mean", ignore=None, smoothing=0.0,
                  is_logp=False):
    logp = logits if is_logp else log_softmax(logits)
    C = logits.shape[-1]
    safe = np.where(t == ignore, 0, t) if ignore is not None else t
    picked = np.take_along_axis(logp, safe[..., None], -1)[..., 0]
    loss = -(1 - smoothing) * picked - smoothing / C * logp.sum(-1)
    mask = (t != ignore).astype(np.float64) if ignore is not None else np.ones_like(loss)
    loss = loss * mask
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / mask.sum()


# (name, Sinter expression, NumPy reference of the inputs dict `i`)
CASES = [
    ("add", "a + b", lambda i: i["a"] + i["b"]),
    ("sub_broadcast", "a - reshape(c, [B, 1, 4])", lambda i: i["a"] - i["c"][:, None, :]),
    ("mul_scalar", "a * 2.5", lambda i: i["a"] * 2.5),
    ("div", "a / p", lambda i: i["a"] / i["p"]),
    ("neg", "-a", lambda i: -i["a"]),
    ("exp", "exp(a)", lambda i: np.exp(i["a"])),
    ("log", "log(p)", lambda i: np.log(i["p"])),
    ("sqrt", "sqrt(p)", lambda i: np.sqrt(i["p"])),
    ("rsqrt", "rsqrt(p)", lambda i: 1 / np.sqrt(i["p"])),
    ("abs", "abs(a)", lambda i: np.abs(i["a"])),
    ("tanh", "tanh(a)", lambda i: np.tanh(i["a"])),
    ("sigmoid", "sigmoid(a)", lambda i: 1 / (1 + np.exp(-i["a"]))),
    ("relu", "relu(a)", lambda i: np.maximum(i["a"], 0)),
    ("gelu", "gelu(a)", lambda i: 0.5 * i["a"] * (1 + erf(i["a"] / math.sqrt(2)))),
    ("gelu_tanh", 'gelu(a, approximate="tanh")',
     lambda i: 0.5 * i["a"] * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                           (i["a"] + 0.044715 * i["a"] ** 3)))),
    ("silu", "silu(a)", lambda i: i["a"] / (1 + np.exp(-i["a"]))),
    ("pow", "pow(p, 1.7)", lambda i: i["p"] ** 1.7),
    ("maximum", "maximum(a, b)", lambda i: np.maximum(i["a"], i["b"])),
    ("minimum", "minimum(a, 0.1)", lambda i: np.minimum(i["a"], 0.1)),
    ("less", "a < b", lambda i: i["a"] < i["b"]),
    ("greater_equal", "a >= 0.2", lambda i: i["a"] >= 0.2),
    ("equal", "ids == 3", lambda i: i["ids"] == 3),
    ("where", "where(a > b, a, b * 2)", lambda i: np.where(i["a"] > i["b"], i["a"], i["b"] * 2)),
    ("cast_int", "cast(ids, FLOAT)", lambda i: i["ids"].astype(np.float64)),
    ("matmul", "a @ w", lambda i: i["a"] @ i["w"]),
    ("matmul_transposed_weight", "a @ transpose(wt)", lambda i: i["a"] @ i["wt"].T),
    ("matmul_batched", "a @ transpose(b)", lambda i: i["a"] @ np.swapaxes(i["b"], -1, -2)),
    ("matmul_broadcast", "reshape(a, [B, 1, 3, 4]) @ reshape(transpose(b), [1, B, 4, 3])",
     lambda i: i["a"].reshape(B, 1, 3, 4) @ np.swapaxes(i["b"], -1, -2).reshape(1, B, 4, 3)),
    ("reshape", "reshape(a, [-1, 2, 6])", lambda i: i["a"].reshape(-1, 2, 6)),
    ("transpose", "transpose(a, [2, 0, 1])", lambda i: i["a"].transpose(2, 0, 1)),
    ("concat", "concat([a, b], 1)", lambda i: np.concatenate([i["a"], i["b"]], 1)),
    ("slice", "slice(a, 2, 1, 3)", lambda i: i["a"][:, :, 1:3]),
    ("arange", "arange(7)", lambda i: np.arange(7)),
    ("one_hot", "one_hot(ids, 10)", lambda i: np.eye(10)[i["ids"]]),
    ("sum", "sum(a, axis=1)", lambda i: i["a"].sum(1)),
    ("sum_all", "sum(a)", lambda i: i["a"].sum()),
    ("mean_keepdim", "mean(a, axis=[0, 2], keepdim=true)", lambda i: i["a"].mean((0, 2), keepdims=True)),
    ("max", "max(a, axis=-1)", lambda i: i["a"].max(-1)),
    ("min", "min(a, axis=0)", lambda i: i["a"].min(0)),
    ("softmax", "softmax(a)", lambda i: softmax(i["a"])),
    ("log_softmax", "log_softmax(a, axis=1)", lambda i: log_softmax(i["a"], 1)),
    ("conv2d", "conv2d(img, k, stride=2, padding=1)", lambda i: conv2d(i["img"], i["k"], 2, 1)),
    ("max_pool2d", "max_pool2d(img, 3, stride=2, padding=1)",
     lambda i: pool(i["img"], 3, 2, 1, np.max, -np.inf)),
    ("avg_pool2d", "avg_pool2d(img, 2)", lambda i: pool(i["img"], 2, 2, 0, np.mean, 0.0)),
    ("global_avg_pool2d", "global_avg_pool2d(img)", lambda i: i["img"].mean((2, 3))),
    ("bn_mean", "batch_norm_stats(img, [0, 2, 3])[0]", lambda i: i["img"].mean((0, 2, 3))),
    ("bn_var", "batch_norm_stats(img, [0, 2, 3])[1]", lambda i: i["img"].var((0, 2, 3))),
    ("ln_mean", "layer_norm_stats(a)[0]", lambda i: i["a"].mean(-1, keepdims=True)),
    ("ln_var", "layer_norm_stats(a)[1]", lambda i: i["a"].var(-1, keepdims=True)),
    ("embedding", "embedding(ids, table)", lambda i: i["table"][i["ids"]]),
    ("dropout_eval", "dropout(a, 0.3)", lambda i: i["a"]),
    ("attention", "scaled_dot_product_attention(a, b, p)", lambda i: attention(i["a"], i["b"], i["p"], False)),
    ("attention_causal", "scaled_dot_product_attention(a, b, p, causal=true)",
     lambda i: attention(i["a"], i["b"], i["p"], True)),
    ("cross_entropy", "cross_entropy(logits, y)", lambda i: cross_entropy(i["logits"], i["y"])),
    ("cross_entropy_sum_smooth", 'cross_entropy(logits, y, reduction="sum", label_smoothing=0.1)',
     lambda i: cross_entropy(i["logits"], i["y"], "sum", smoothing=0.1)),
    ("cross_entropy_tokens", "cross_entropy(a, yt, ignore_index=-1)",
     lambda i: cross_entropy(i["a"], i["yt"], ignore=-1)),
    ("cross_entropy_none", 'cross_entropy(a, yt, reduction="none", ignore_index=-1)',
     lambda i: cross_entropy(i["a"], i["yt"], "none", ignore=-1)),
    ("nll_loss", "nll_loss(log_softmax(logits), y)",
     lambda i: cross_entropy(log_softmax(i["logits"]), i["y"], is_logp=True)),
    ("mse_loss", "mse_loss(a, b)", lambda i: ((i["a"] - i["b"]) ** 2).mean()),
    ("l1_loss_sum", 'l1_loss(a, b, reduction="sum")', lambda i: np.abs(i["a"] - i["b"]).sum()),
    ("bce_with_logits", "bce_with_logits(a, t01)",
     lambda i: (np.maximum(i["a"], 0) - i["a"] * i["t01"] + np.log1p(np.exp(-np.abs(i["a"])))).mean()),
    ("accuracy", "accuracy(logits, y)",
     lambda i: (i["logits"].argmax(-1) == i["y"]).mean()),
]

INPUTS = {  # name: (dtype kind, per-sample shape, sampler)
    "a": ("F", (3, 4), lambda r, s: r.standard_normal(s)),
    "b": ("F", (3, 4), lambda r, s: r.standard_normal(s)),
    "c": ("F", (4,), lambda r, s: r.standard_normal(s)),
    "p": ("F", (3, 4), lambda r, s: r.uniform(0.5, 2.0, s)),
    "t01": ("F", (3, 4), lambda r, s: r.uniform(0.0, 1.0, s)),
    "logits": ("F", (5,), lambda r, s: r.standard_normal(s) * 2),
    "img": ("F", (3, 8, 8), lambda r, s: r.standard_normal(s)),
    "ids": ("I", (6,), lambda r, s: r.integers(0, 10, s)),
    "y": ("I", (), lambda r, s: r.integers(0, 5, s)),
    "yt": ("I", (3,), lambda r, s: r.integers(-1, 4, s)),
}
PARAMS = {"w": (4, 5), "wt": (5, 4), "k": (6, 3, 3, 3), "table": (10, 4)}


def model_source(dtype):
    lines = ["model ops {"]
    for name, (kind, shape, _) in INPUTS.items():
        dims = ", ".join(["B"] + [str(d) for d in shape])
        lines.append(f"  input {name}: {dtype if kind == 'F' else 'i32'}[{dims}]")
    for name, shape in PARAMS.items():
        lines.append(f"  param {name}: {dtype}[{', '.join(map(str, shape))}] = zeros")
    for name, expr, _ in CASES:
        lines.append(f"  output {name} = {expr.replace('FLOAT', dtype)}")
    lines.append("  loss mean(a)")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    workdir = sys.argv[1]
    seed = test_seed(sys.argv, 2)
    print(f"seed {seed} (rerun with: check_ops.py WORKDIR {seed})")
    rng = np.random.default_rng(seed)
    for dtype, tol in (("f32", 1e-5), ("f64", 1e-12)):
        npdt = np.float32 if dtype == "f32" else np.float64
        inputs = {}
        data = os.path.join(workdir, dtype)
        os.makedirs(os.path.join(data, "out"), exist_ok=True)
        npy = ""
        for name, (kind, shape, sample) in INPUTS.items():
            x = sample(rng, (B,) + shape)
            x = x.astype(npdt if kind == "F" else np.int32)
            inputs[name] = x
            np.save(os.path.join(data, name + ".npy"), x)
            npy += f'npy {{ input: "{name}" path: "{name}.npy" }} '
        params = {n: rng.standard_normal(s).astype(npdt) for n, s in PARAMS.items()}
        inputs.update(params)
        write_safetensors(os.path.join(data, "params.safetensors"), params)
        prog = compile_program(
            data, model_source(dtype),
            f"batch {{ global: {B} micro: {B} }}\ndata {{ eval {{ {npy}}} }}\n")
        run_eval(prog, "--init", os.path.join(data, "params.safetensors"),
                 "--outputs", os.path.join(data, "out"))
        # The reference sees exactly the values the program saw, in float64.
        ref_inputs = {k: v.astype(np.float64) if v.dtype.kind == "f" else v
                      for k, v in inputs.items()}
        worst = 0.0
        for name, _, reference in CASES:
            got = np.load(os.path.join(data, "out", name + ".npy"))
            want = np.asarray(reference(ref_inputs))
            if got.dtype == np.bool_:
                if got.shape != want.shape or not np.array_equal(got, want):
                    sys.exit(f"FAIL {dtype} {name}: boolean results differ")
                continue
            if want.ndim == got.ndim - 1 and got.shape[0] == 1:
                got = got[0]  # outputs without a batch axis are stacked per batch
            worst = max(worst, check_close(f"{dtype} {name}", got, want, tol))
        print(f"{dtype}: {len(CASES)} operations match NumPy, worst relative "
              f"error {worst:.2e} (tolerance {tol:g})")


if __name__ == "__main__":
    main()
