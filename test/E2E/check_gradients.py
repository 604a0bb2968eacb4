"""Gradient checks: every differentiable operation, compiled with its
backward pass (the program's train step), against central finite
differences of the compiled forward pass, in float64, on random inputs
(fresh each run). Relative error below 1e-6.

    python3 check_gradients.py WORKDIR [SEED]

One model holds every case: case k has its own parameter w_k and adds
sum(expr_k * r_k) to the loss, with r_k a random input, so each parameter's
gradient is a random projection of the op's Jacobian.
"""
import os
import sys

import numpy as np

from sinter_testing import run, test_seed, write_safetensors

B = 2
# (name, parameter shape, expression of `w`, shape of one sample of the
# expression's value, or None for a scalar)
CASES = [
    ("add", (4,), "a + w", (3, 4)),
    ("sub", (3, 4), "w - a", (3, 4)),
    ("mul", (4,), "a * w", (3, 4)),
    ("div", (3, 4), "a / (w * w + 1.0)", (3, 4)),
    ("pow", (3, 4), "pow(w * w + 0.5, 1.7)", (3, 4)),
    ("pow_exponent", (3, 4), "pow(p, w)", (3, 4)),
    ("maximum", (3, 4), "maximum(a, w)", (3, 4)),
    ("minimum", (4,), "minimum(w, a)", (3, 4)),
    ("neg", (4,), "-w", (4,)),
    ("abs", (4,), "abs(w)", (4,)),
    ("relu", (3, 4), "relu(w + a)", (3, 4)),
    ("exp", (4,), "exp(w)", (4,)),
    ("log", (4,), "log(w * w + 1.0)", (4,)),
    ("sqrt", (4,), "sqrt(w * w + 0.5)", (4,)),
    ("rsqrt", (4,), "rsqrt(w * w + 0.5)", (4,)),
    ("tanh", (4,), "tanh(w)", (4,)),
    ("sigmoid", (4,), "sigmoid(w)", (4,)),
    ("silu", (4,), "silu(w)", (4,)),
    ("gelu", (4,), "gelu(w)", (4,)),
    ("gelu_tanh", (4,), 'gelu(w, approximate="tanh")', (4,)),
    ("where", (3, 4), "where(a > 0, w, w * 2.0)", (3, 4)),
    ("matmul", (4, 5), "a @ w", (3, 5)),
    ("matmul_left", (5, 3), "w @ a", (5, 4)),
    ("matmul_transposed", (5, 4), "a @ transpose(w)", (3, 5)),
    ("reshape", (3, 4), "reshape(w, [2, 6])", (2, 6)),
    ("transpose", (3, 4), "transpose(w, [1, 0])", (4, 3)),
    ("concat", (3, 4), "concat([w, w * 2.0], 0)", (6, 4)),
    ("slice", (3, 4), "slice(w, 1, 1, 3)", (3, 2)),
    ("sum", (3, 4), "sum(w, axis=0)", (4,)),
    ("mean", (3, 4), "mean(w)", None),
    ("max", (3, 4), "max(w, axis=1, keepdim=true)", (3, 1)),
    ("min", (3, 4), "min(w)", None),
    ("softmax", (3, 4), "softmax(w)", (3, 4)),
    ("log_softmax", (3, 4), "log_softmax(w, axis=0)", (3, 4)),
    ("ln_mean", (3, 4), "layer_norm_stats(w)[0]", (3, 1)),
    ("ln_var", (3, 4), "layer_norm_stats(w)[1]", (3, 1)),
    ("bn_var", (3, 4), "batch_norm_stats(a * w, [0, 1])[1]", (4,)),
    ("global_avg_pool2d", (3, 1, 1), "global_avg_pool2d(img * w)", (3,)),
    ("max_pool2d", (3, 4, 4), "max_pool2d(img * w, 2)", (3, 2, 2)),
    ("max_pool2d_overlapping", (3, 4, 4), "max_pool2d(img * w, 3, stride=1, padding=1)", (3, 4, 4)),
    ("max_pool2d_strided", (3, 4, 4), "max_pool2d(img * w, [3, 2], stride=[2, 1], padding=[1, 0])", (3, 2, 3)),
    ("avg_pool2d", (3, 4, 4), "avg_pool2d(img * w, 3, stride=2, padding=1)", (3, 2, 2)),
    ("avg_pool2d_overlapping", (3, 4, 4), "avg_pool2d(img * w, 2, stride=1)", (3, 3, 3)),
    ("conv2d_weight", (2, 3, 3, 3), "conv2d(img, w, stride=1, padding=1)", (2, 4, 4)),
    ("conv2d_weight_strided", (2, 3, 2, 2), "conv2d(img, w, stride=2, padding=1, dilation=1)", (2, 3, 3)),
    # The input a slice (a strided view, which the CPU library gets dense).
    ("conv2d_weight_sliced", (2, 3, 3, 3), "conv2d(slice(img, 3, 1, 4), w, stride=1, padding=1)", (2, 4, 3)),
    ("conv2d_input", (3, 4, 4), "conv2d(img * w, k, stride=2, padding=1)", (2, 2, 2)),
    ("conv2d_input_dilated", (3, 4, 4), "conv2d(img * w, k, padding=2, dilation=2)", (2, 4, 4)),
    # Grouped: depthwise (one input channel a group, two outputs per group
    # for the input's case) and two groups of two channels.
    ("conv2d_depthwise_weight", (3, 1, 3, 3), "conv2d(img, w, stride=1, padding=1, groups=3)", (3, 4, 4)),
    ("conv2d_depthwise_input", (3, 4, 4), "conv2d(img * w, kd, stride=2, padding=1, groups=3)", (6, 2, 2)),
    ("conv2d_grouped_weight", (4, 2, 2, 2), "conv2d(img4, w, stride=2, padding=1, groups=2)", (4, 2, 2)),
    ("conv2d_grouped_input", (4, 3, 3), "conv2d(img4 * w, kg, padding=2, dilation=2, groups=2)", (6, 3, 3)),
    ("embedding", (10, 4), "embedding(ids, w)", (6, 4)),
    ("attention_q", (3, 4), "scaled_dot_product_attention(a * w, b, p)", (3, 4)),
    ("attention_kv_causal", (3, 4),
     "scaled_dot_product_attention(a, b * w, p * w, causal=true)", (3, 4)),
    ("cross_entropy", (4, 5), "cross_entropy(c @ w, y)", None),
    ("cross_entropy_smooth_sum", (4, 5),
     'cross_entropy(c @ w, y, reduction="sum", label_smoothing=0.2)', None),
    ("cross_entropy_tokens", (4, 5), "cross_entropy(a @ w, yt, ignore_index=-1)", None),
    ("cross_entropy_none", (4, 5),
     'cross_entropy(a @ w, yt, reduction="none", ignore_index=-1)', (3,)),
    ("nll_loss", (4, 5), "nll_loss(log_softmax(c @ w), y)", None),
    ("mse_loss", (3, 4), "mse_loss(w * a, b)", None),
    ("l1_loss", (3, 4), 'l1_loss(w * a, b, reduction="sum")', None),
    ("bce_with_logits", (3, 4), "bce_with_logits(w * a, t01)", None),
]

INPUTS = {
    "a": ((3, 4), lambda r, s: r.standard_normal(s)),
    "b": ((3, 4), lambda r, s: r.standard_normal(s)),
    "c": ((4,), lambda r, s: r.standard_normal(s)),
    "p": ((3, 4), lambda r, s: r.uniform(0.5, 2.0, s)),
    "t01": ((3, 4), lambda r, s: r.uniform(0, 1, s)),
    "img": ((3, 4, 4), lambda r, s: r.standard_normal(s)),
    "img4": ((4, 3, 3), lambda r, s: r.standard_normal(s)),
}
# Parameters some cases use but that are not checked themselves.
FIXED_PARAMS = {"k": (2, 3, 3, 3), "kd": (6, 1, 3, 3), "kg": (6, 2, 3, 3)}
INT_INPUTS = {
    "ids": ((6,), 10),
    "y": ((), 5),
    "yt": ((3,), 5),
}


def model_source():
    lines = ["model grads {"]
    for name, (shape, _) in INPUTS.items():
        lines.append(f"  input {name}: f64[{', '.join(['B'] + [str(d) for d in shape])}]")
    for name, (shape, _) in INT_INPUTS.items():
        lines.append(f"  input {name}: i32[{', '.join(['B'] + [str(d) for d in shape])}]")
    for name, shape in FIXED_PARAMS.items():
        lines.append(f"  param {name}: f64[{', '.join(map(str, shape))}] = zeros")
    terms = []
    for k, (name, pshape, expr, oshape) in enumerate(CASES):
        lines.append(f"  param w{k}: f64[{', '.join(map(str, pshape))}] = zeros")
        e = expr.replace("w", f"w{k}") if "w" in expr else expr
        # Replace only the parameter name `w`, not letters inside other names.
        e = " ".join(expr.split())
        e = _rename(expr, f"w{k}")
        if oshape is None:
            terms.append(f"({e}) * 1.3")
        else:
            dims = ", ".join(["B"] + [str(d) for d in oshape])
            lines.append(f"  input r{k}: f64[{dims}]")
            terms.append(f"sum(({e}) * r{k})")
    lines.append("  total = " + " + ".join(terms))
    lines.append("  output total_out = total")
    lines.append("  loss total")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _rename(expr, new):
    out, i = [], 0
    while i < len(expr):
        ch = expr[i]
        if ch == "w" and (i == 0 or not (expr[i - 1].isalnum() or expr[i - 1] == "_")) \
                and (i + 1 == len(expr) or not (expr[i + 1].isalnum() or expr[i + 1] == "_")):
            out.append(new)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def main():
    workdir = sys.argv[1]
    seed = test_seed(sys.argv, 2)
    print(f"seed {seed} (rerun with: check_gradients.py WORKDIR {seed})")
    rng = np.random.default_rng(seed)
    os.makedirs(workdir, exist_ok=True)
    npy = ""
    def save(name, x):
        nonlocal npy
        np.save(os.path.join(workdir, name + ".npy"), x)
        npy += f'npy {{ input: "{name}" path: "{name}.npy" }} '
    for name, (shape, sample) in INPUTS.items():
        save(name, sample(rng, (B,) + shape))
    for name, (shape, n) in INT_INPUTS.items():
        lo = -1 if name == "yt" else 0
        save(name, rng.integers(lo, n, (B,) + shape).astype(np.int32))
    for k, (_, _, _, oshape) in enumerate(CASES):
        if oshape is not None:
            save(f"r{k}", rng.standard_normal((B,) + oshape))
    config = (f"batch {{ global: {B} micro: {B} }}\n"
              f"data {{ train {{ {npy}}} eval {{ {npy}}} }}\n")
    with open(os.path.join(workdir, "model.sn"), "w"):
        pass
    prog = os.path.join(workdir, "prog")
    src = model_source()
    with open(os.path.join(workdir, "model.sn"), "w") as f:
        f.write(src)
    with open(os.path.join(workdir, "train.pbtxt"), "w") as f:
        f.write('model: "model.sn"\n' + config)
    run(["sinterc", "--config", os.path.join(workdir, "train.pbtxt"),
         "-o", prog])

    params = {f"w{k}": rng.standard_normal(shape) for k, (_, shape, _, _) in
              enumerate(CASES)}
    params.update({n: rng.standard_normal(s) for n, s in FIXED_PARAMS.items()})
    init = os.path.join(workdir, "params.safetensors")
    write_safetensors(init, params)
    grads_dir = os.path.join(workdir, "grads")
    os.makedirs(grads_dir, exist_ok=True)
    run([prog, "--gradients", grads_dir, "--init", init])

    def loss_at(values):
        path = os.path.join(workdir, "probe.safetensors")
        write_safetensors(path, values)
        out = os.path.join(workdir, "probe")
        os.makedirs(out, exist_ok=True)
        run([prog, "--eval", "--init", path, "--outputs", out])
        return float(np.load(os.path.join(out, "total_out.npy"))[0])

    worst = 0.0
    for k, (name, shape, _, _) in enumerate(CASES):
        got = np.load(os.path.join(grads_dir, f"w{k}.npy"))
        want = np.zeros(shape)
        for idx in np.ndindex(*shape):
            h = 1e-5 * max(1.0, abs(params[f"w{k}"][idx]))
            plus = {n: v.copy() for n, v in params.items()}
            minus = {n: v.copy() for n, v in params.items()}
            plus[f"w{k}"][idx] += h
            minus[f"w{k}"][idx] -= h
            want[idx] = (loss_at(plus) - loss_at(minus)) / (2 * h)
        if got.shape != want.shape or not np.all(np.isfinite(got)):
            sys.exit(f"FAIL {name}: gradient shape {got.shape} or non-finite values")
        err = float(np.max(np.abs(got - want))) / max(float(np.max(np.abs(want))), 1e-12)
        if not err < 1e-6:
            sys.exit(f"FAIL {name}: relative error {err:.3g}\n got {got}\n want {want}")
        worst = max(worst, err)
    print(f"{len(CASES)} gradients match central differences, worst relative "
          f"error {worst:.2e} (tolerance 1e-6)")


if __name__ == "__main__":
    main()
