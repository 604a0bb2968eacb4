"""Float32 gradient checks: every case of check_gradients.py, and whole models
(examples/mlp, the small CNN with batch-norm in training mode of
check_training.py, a small examples/gpt), compiled in float32, must compute
their gradients about as precisely as JAX does in float32. check_gradients.py
checks the formulas in float64, where a formula that loses precision (a
difference of nearly equal numbers, a variance as E[x^2] - E[x]^2, ...) still
passes; this check sees it.

    python3 check_gradients_f32.py WORKDIR EXAMPLES_DIR [SEED] [--table]

The ops' model is check_gradients' own (its CASES, inputs and loss) with every
f64 declaration made f32; one program holds all the cases, and one program
per model. Inputs and parameters are random (fresh each run), drawn in float64
and rounded to float32, so float32 and float64 evaluate the same function.
For each case (for the models: each parameter tensor):

  g_ref    the gradient in float64, from JAX with jax_enable_x64 (JAX_CASES
           below; models_jax.py for the models). check_gradients.py and
           check_training.py check Sinter's own float64 function and gradient
           against finite differences and JAX; here a JAX model that computed
           another function than Sinter's would make Sinter's error large, so
           it fails the check rather than hiding in the reference. The float32
           program's loss must also equal the float64 reference's within 1e-5.
  sinter   Sinter's float32 gradient (the program's --gradients mode),
  jax      JAX's float32 gradient of the same function on the same inputs,

with the error of one gradient sinter_testing.relative_error (max |g - g_ref| /
max |g_ref| over the tensor). Each case is measured on DRAWS = 8 independent
draws of its inputs and parameters (one program run each), and its error is
the geometric mean over the draws of max(draw's error, floor), with the floor
4 * 2**-24, Sinter's and JAX's alike. The check is

  error(sinter) <= 3 * error(jax),

which for a single draw is error(sinter) <= 3 * max(error(jax), floor).

Why several draws and their geometric mean: one draw's error is the largest
of many elements' rounding noise, scaled by how ill-conditioned that draw's
gradient happens to be, and is heavy-tailed. Two equally good float32
implementations (JAX, and NumPy float32 running the backward formulas Sinter
compiles) differ by more than 3x on 2-5% of draws of the attention case, in
either direction, and still on 3-6% of runs if each takes the largest error
of four draws. Over eight draws the geometric mean settles: in 500 simulated
runs of that attention case the two stayed within 2.4x of each other, and in
40 runs of this script no case outside the batch-norm CNN came above 1.45x.
A formula that loses precision systematically, the kind this check is for,
stays as far above JAX in the mean as on a single draw. (A precision loss on
rare inputs alone could hide in the mean; the table shows each case's
largest single-draw errors too.)

The floor: both errors are in units of the tensor's largest gradient, where
rounding a result to float32 once already costs up to 2**-24 (half an ulp).
A correct float32 implementation that only rounds differently from JAX
(another summation order, a fused or an unfused multiply-add, exp and tanh
with an ulp or two of their own) differs by a few such roundings, while JAX
can be nearly exact by luck (a gradient that is one product or a sum of two).
With the floor at 4 half-ulps no bound is below 12 * 2**-24 = 7.2e-7, and an
exact draw (neg, slice, max, ...) counts as the floor, not as zero; most
cases' errors are 3e-8 .. 5e-7, JAX's and Sinter's alike. The factor, the
floor and the draws are the same for every case: nothing is loosened for one
op.

With --table every case's errors are printed; on failure the failing cases'
are (on stderr), and the script exits non-zero.
"""
import concurrent.futures
import json
import math
import os
import re
import struct
import sys
import time

import jax
import jax.numpy as jnp
from jax import lax
import numpy as np

import check_gradients
import check_training
import models_jax  # also enables float64 in JAX
from sinter_testing import (npy_feeds, read_safetensors, relative_error, run, test_seed,
                            write_safetensors)

jax.config.update("jax_enable_x64", True)

FACTOR = 3
FLOOR = 4 * 2.0**-24
LOSS_TOL = 1e-5
DRAWS = 8
LOSS_LINE = re.compile(r"^train: loss (\S+),")


# JAX versions of check_gradients.CASES ----------------------------------------

def _conv(x, w, stride=1, padding=0, dilation=1, groups=1):
    return lax.conv_general_dilated(
        x, w, (stride, stride), [(padding, padding)] * 2,
        rhs_dilation=(dilation, dilation),
        dimension_numbers=("NCHW", "OIHW", "NCHW"), feature_group_count=groups)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _window(x, init, op, k, stride, padding):
    k, s, p = _pair(k), _pair(stride if stride is not None else k), _pair(padding)
    return lax.reduce_window(x, np.array(init, x.dtype), op, (1, 1) + k, (1, 1) + s,
                             ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))


def _max_pool(x, k, stride=None, padding=0):
    return _window(x, -jnp.inf, lax.max, k, stride, padding)


def _avg_pool(x, k, stride=None, padding=0):
    # PyTorch's default count_include_pad=True: padding counts as zeros.
    kh, kw = _pair(k)
    return _window(x, 0, lax.add, k, stride, padding) / (kh * kw)


def _attention(q, k, v, causal=False):
    s = q @ jnp.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = jnp.where(jnp.tril(jnp.ones(s.shape[-2:], bool)), s, -jnp.inf)
    return jax.nn.softmax(s, -1) @ v


def _cross_entropy(logits, t, reduction="mean", ignore=None, smoothing=0.0,
                   is_logp=False):
    logp = logits if is_logp else jax.nn.log_softmax(logits, -1)
    safe = jnp.where(t == ignore, 0, t) if ignore is not None else t
    loss = -jnp.take_along_axis(logp, safe[..., None], -1)[..., 0]
    if smoothing:
        loss = (1 - smoothing) * loss - smoothing / logp.shape[-1] * logp.sum(-1)
    if ignore is not None:
        mask = (t != ignore).astype(logp.dtype)
        loss = loss * mask
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / mask.sum() if ignore is not None else loss.mean()


# name: f(w, inputs) with the value of the case's expression (batched inputs).
JAX_CASES = {
    "add": lambda w, i: i["a"] + w,
    "sub": lambda w, i: w - i["a"],
    "mul": lambda w, i: i["a"] * w,
    "div": lambda w, i: i["a"] / (w * w + 1.0),
    "pow": lambda w, i: jnp.power(w * w + 0.5, 1.7),
    "pow_exponent": lambda w, i: jnp.power(i["p"], w),
    "maximum": lambda w, i: jnp.maximum(i["a"], w),
    "minimum": lambda w, i: jnp.minimum(w, i["a"]),
    "neg": lambda w, i: -w,
    "abs": lambda w, i: jnp.abs(w),
    "relu": lambda w, i: jax.nn.relu(w + i["a"]),
    "exp": lambda w, i: jnp.exp(w),
    "log": lambda w, i: jnp.log(w * w + 1.0),
    "sqrt": lambda w, i: jnp.sqrt(w * w + 0.5),
    "rsqrt": lambda w, i: lax.rsqrt(w * w + 0.5),
    "tanh": lambda w, i: jnp.tanh(w),
    "sigmoid": lambda w, i: jax.nn.sigmoid(w),
    "silu": lambda w, i: jax.nn.silu(w),
    "gelu": lambda w, i: jax.nn.gelu(w, approximate=False),
    "gelu_tanh": lambda w, i: jax.nn.gelu(w, approximate=True),
    "where": lambda w, i: jnp.where(i["a"] > 0, w, w * 2.0),
    "matmul": lambda w, i: i["a"] @ w,
    "matmul_left": lambda w, i: w @ i["a"],
    "matmul_transposed": lambda w, i: i["a"] @ w.T,
    "reshape": lambda w, i: w.reshape(2, 6),
    "transpose": lambda w, i: w.T,
    "concat": lambda w, i: jnp.concatenate([w, w * 2.0], 0),
    "slice": lambda w, i: w[:, 1:3],
    "sum": lambda w, i: w.sum(0),
    "mean": lambda w, i: w.mean(),
    "max": lambda w, i: w.max(1, keepdims=True),
    "min": lambda w, i: w.min(),
    "softmax": lambda w, i: jax.nn.softmax(w, -1),
    "log_softmax": lambda w, i: jax.nn.log_softmax(w, 0),
    "ln_mean": lambda w, i: w.mean(-1, keepdims=True),
    "ln_var": lambda w, i: jnp.var(w, -1, keepdims=True),
    "bn_var": lambda w, i: jnp.var(i["a"] * w, (0, 1)),
    "global_avg_pool2d": lambda w, i: (i["img"] * w).mean((2, 3)),
    "max_pool2d": lambda w, i: _max_pool(i["img"] * w, 2),
    "max_pool2d_overlapping": lambda w, i: _max_pool(i["img"] * w, 3, 1, 1),
    "max_pool2d_strided": lambda w, i: _max_pool(i["img"] * w, (3, 2), (2, 1), (1, 0)),
    "avg_pool2d": lambda w, i: _avg_pool(i["img"] * w, 3, 2, 1),
    "avg_pool2d_overlapping": lambda w, i: _avg_pool(i["img"] * w, 2, 1),
    "conv2d_weight": lambda w, i: _conv(i["img"], w, 1, 1),
    "conv2d_weight_strided": lambda w, i: _conv(i["img"], w, 2, 1, 1),
    "conv2d_weight_sliced": lambda w, i: _conv(i["img"][..., 1:4], w, 1, 1),
    "conv2d_input": lambda w, i: _conv(i["img"] * w, i["k"], 2, 1),
    "conv2d_input_dilated": lambda w, i: _conv(i["img"] * w, i["k"], 1, 2, 2),
    "conv2d_depthwise_weight": lambda w, i: _conv(i["img"], w, 1, 1, groups=3),
    "conv2d_depthwise_input": lambda w, i: _conv(i["img"] * w, i["kd"], 2, 1, groups=3),
    "conv2d_grouped_weight": lambda w, i: _conv(i["img4"], w, 2, 1, groups=2),
    "conv2d_grouped_input": lambda w, i: _conv(i["img4"] * w, i["kg"], 1, 2, 2, groups=2),
    "embedding": lambda w, i: w[i["ids"]],
    "attention_q": lambda w, i: _attention(i["a"] * w, i["b"], i["p"]),
    "attention_kv_causal": lambda w, i: _attention(i["a"], i["b"] * w, i["p"] * w,
                                                   causal=True),
    "cross_entropy": lambda w, i: _cross_entropy(i["c"] @ w, i["y"]),
    "cross_entropy_smooth_sum": lambda w, i: _cross_entropy(
        i["c"] @ w, i["y"], "sum", smoothing=0.2),
    "cross_entropy_tokens": lambda w, i: _cross_entropy(i["a"] @ w, i["yt"], ignore=-1),
    "cross_entropy_none": lambda w, i: _cross_entropy(i["a"] @ w, i["yt"], "none",
                                                      ignore=-1),
    "nll_loss": lambda w, i: _cross_entropy(jax.nn.log_softmax(i["c"] @ w), i["y"],
                                            is_logp=True),
    "mse_loss": lambda w, i: jnp.mean((w * i["a"] - i["b"]) ** 2),
    "l1_loss": lambda w, i: jnp.sum(jnp.abs(w * i["a"] - i["b"])),
    "bce_with_logits": lambda w, i: jnp.mean(
        jnp.maximum(w * i["a"], 0) - w * i["a"] * i["t01"] +
        jnp.log1p(jnp.exp(-jnp.abs(w * i["a"])))),
}


def op_terms(ws, inputs, rs):
    """Each case's term of check_gradients' loss: sum(expr_k * r_k) or
    expr_k * 1.3 for a scalar expression."""
    terms = []
    for k, (name, _, _, oshape) in enumerate(check_gradients.CASES):
        value = JAX_CASES[name](ws[f"w{k}"], inputs)
        terms.append(value * 1.3 if oshape is None else jnp.sum(value * rs[f"r{k}"]))
    return terms


_JITTED = {}


def jax_gradients(loss, params, data, dtype):
    """Gradients of loss(params, data), which returns (value, aux), in `dtype`
    (params and the floating-point data cast to it); returns (value, aux,
    {name: gradient}). One compilation per function, shapes and dtype."""
    cast = lambda v: jnp.asarray(v, dtype) if np.asarray(v).dtype.kind == "f" else v
    p = {k: cast(v) for k, v in params.items()}
    data = jax.tree_util.tree_map(cast, data)
    if loss not in _JITTED:
        _JITTED[loss] = jax.jit(jax.value_and_grad(loss, has_aux=True))
    (value, aux), grads = _JITTED[loss](p, data)
    grads = {k: np.asarray(g) for k, g in grads.items()}
    for k, g in grads.items():
        if g.dtype != np.dtype(dtype):
            sys.exit(f"FAIL: JAX computed the gradient of {k} in {g.dtype}, not {dtype}")
    return float(value), aux, grads


def op_loss(ws, data):
    """check_gradients' loss, and the sum of its terms' magnitudes."""
    terms = op_terms(ws, *data)
    return sum(terms), sum(jnp.abs(t) for t in terms)


# Sinter ---------------------------------------------------------------------

def f32(x):
    return np.asarray(x, np.float32)


def sinter_gradients(prog, workdir, *args):
    """Runs `prog --gradients`; returns (loss, {name: gradient})."""
    out_dir = os.path.join(workdir, "grads")
    os.makedirs(out_dir, exist_ok=True)
    out = run([prog, "--gradients", out_dir, *args])
    m = [LOSS_LINE.match(line) for line in out.splitlines()]
    m = [x for x in m if x]
    if not m:
        sys.exit(f"no loss line in the output of {prog} --gradients:\n{out}")
    grads = {f[:-4]: np.load(os.path.join(out_dir, f)) for f in os.listdir(out_dir)
             if f.endswith(".npy")}
    return float(m[0].group(1)), grads


def write_data(workdir, data):
    """Writes {input: array} as npy files and data.pbtxt, a config that reads
    them, in order, for training and evaluation; returns its path."""
    npy = npy_feeds(workdir, data)
    path = os.path.join(workdir, "data.pbtxt")
    with open(path, "w") as f:
        f.write(f"data {{ train {{ {npy}}} eval {{ {npy}}} shuffle: false }}\n")
    return path


def draw_ops(workdir, rng):
    """One draw of check_gradients' inputs and parameters (float32 values),
    written to workdir; returns (params, inputs, rs)."""
    B = check_gradients.B
    inputs, rs = {}, {}
    for name, (shape, sample) in check_gradients.INPUTS.items():
        inputs[name] = f32(sample(rng, (B,) + shape))
    for name, (shape, n) in check_gradients.INT_INPUTS.items():
        lo = -1 if name == "yt" else 0
        inputs[name] = rng.integers(lo, n, (B,) + shape).astype(np.int32)
    for k, (_, _, _, oshape) in enumerate(check_gradients.CASES):
        if oshape is not None:
            rs[f"r{k}"] = f32(rng.standard_normal((B,) + oshape))
    write_data(workdir, {**inputs, **rs})
    params = {f"w{k}": f32(rng.standard_normal(shape))
              for k, (_, shape, _, _) in enumerate(check_gradients.CASES)}
    fixed = {n: f32(rng.standard_normal(s)) for n, s in check_gradients.FIXED_PARAMS.items()}
    write_safetensors(os.path.join(workdir, "params.safetensors"), {**params, **fixed})
    return params, {**inputs, **fixed}, rs


def run_ops(workdir):
    """Compiles check_gradients' model in f32 and takes its gradients for
    each draw in workdir/draw*; returns [(loss, grads)]."""
    B = check_gradients.B
    source = check_gradients.model_source().replace(": f64[", ": f32[")
    if "f64" in source:
        sys.exit("FAIL: check_gradients' model has an f64 that is not a declaration's")
    with open(os.path.join(workdir, "model.sn"), "w") as f:
        f.write(source)
    config = os.path.join(workdir, "train.pbtxt")
    with open(config, "w") as f:
        f.write(f'model: "model.sn"\nbatch {{ global: {B} micro: {B} }}\n')
    prog = os.path.join(workdir, "prog")
    run(["sinterc", "--config", config, "-o", prog])
    results = []
    for j in range(DRAWS):
        draw = os.path.join(workdir, f"draw{j}")
        results.append(sinter_gradients(
            prog, draw, "--config", os.path.join(draw, "data.pbtxt"),
            "--init", os.path.join(draw, "params.safetensors")))
    return results


# The models -------------------------------------------------------------------

def write_with_scalars(path, tensors):
    """write_safetensors, keeping 0-d tensors (batch-norm's
    num_batches_tracked) 0-d: it writes them as [1] (np.ascontiguousarray),
    which a program's --init refuses."""
    write_safetensors(path, tensors)
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    for name, value in tensors.items():
        if np.ndim(value) == 0:
            header[name]["shape"] = []
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + raw[8 + n:])


def run_model(workdir, name, config, defines, draws, seed, source=None,
              compile_args=()):
    """Compiles a model in f32 (with sinterc's `compile_args`) and, for each
    draw of its data, draws its parameters (the initialisers' values moved by
    random amounts, so no norm weight is exactly one and no bias zero) and
    takes its gradients. Returns [(loss, params, grads)]."""
    work = os.path.join(workdir, name)
    os.makedirs(work, exist_ok=True)
    if source:
        with open(os.path.join(work, "model.sn"), "w") as f:
            f.write(source)
        path = os.path.join(work, "model.pbtxt")
        with open(path, "w") as f:
            f.write('model: "model.sn"\n' + config)
        config = path
    b = len(next(iter(draws[0].values())))
    prog = os.path.join(work, "prog")
    run(["sinterc", "--config", config, f"-DB={b}",
         *[f"-D{k}={v}" for k, v in defines.items()], *compile_args, "-o", prog])
    overlays = []
    for j, data in enumerate(draws):
        overlays.append(write_data(os.path.join(work, f"draw{j}"), data))
        with open(overlays[-1], "a") as f:
            f.write(f"batch {{ global: {b} micro: {b} }}\n")
    init = os.path.join(work, "init.safetensors")
    run([prog, "--eval", "--config", overlays[0], "--set", "eval.batches=1",
         "--save", init])
    initial = read_safetensors(init)
    rng = np.random.default_rng(seed)
    results = []
    for overlay in overlays:
        tensors, params = dict(initial), {}
        for k in sorted(tensors):
            v = tensors[k]
            if v.dtype != np.float32:
                if v.dtype.kind == "f":
                    sys.exit(f"FAIL {name}: {k} is {v.dtype}, not float32")
                continue
            if any(s in k for s in ("running_", "num_batches_tracked")):
                continue
            scale = 0.5 * max(float(np.std(v)), 0.1)
            params[k] = tensors[k] = f32(v + scale * rng.standard_normal(v.shape))
        moved = os.path.join(os.path.dirname(overlay), "params.safetensors")
        write_with_scalars(moved, tensors)
        loss, grads = sinter_gradients(prog, os.path.dirname(overlay),
                                       "--config", overlay, "--init", moved)
        results.append((loss, params, grads))
    return results


def model_specs(examples, rng):
    """(name, compile config, -D overrides, [data of each draw],
    JAX loss(p, data), source)."""
    B, T, V = 8, 8, 32
    def gpt_data():
        targets = rng.integers(0, V, (2, T)).astype(np.int32)
        targets[rng.uniform(0, 1, targets.shape) < 0.2] = -1
        return {"idx": rng.integers(0, V, (2, T)).astype(np.int32), "targets": targets}
    cnn_data = lambda: {"x": f32(rng.standard_normal((B, 3, 8, 8))),
                        "y": rng.integers(0, 10, B).astype(np.int32)}
    mlp_data = lambda: {"x": f32(rng.uniform(0, 1, (B, 64))),
                        "y": rng.integers(0, 10, B).astype(np.int32)}
    return [
        ("gpt_small", os.path.join(examples, "gpt/gpt_tiny.pbtxt"),
         {"T": T, "vocab": V, "ctx": T, "dim": 16, "heads": 4, "layers": 2},
         [gpt_data() for _ in range(DRAWS)],
         lambda p, d: models_jax.gpt(p, d["idx"], d["targets"], heads=4, layers=2), None),
        ("cnn_batch_norm", f"batch {{ global: {B} micro: {B} }}\n", {},
         [cnn_data() for _ in range(DRAWS)],
         lambda p, d: models_jax.small_cnn(p, d["x"], d["y"]), check_training.CNN),
        ("mlp", os.path.join(examples, "mlp/mlp.pbtxt"), {"hidden": 32},
         [mlp_data() for _ in range(DRAWS)],
         lambda p, d: models_jax.mlp(p, d["x"], d["y"]), None),
    ]


# The check --------------------------------------------------------------------

def error(label, got, ref):
    """Sinter's gradient `got` against the reference `ref`."""
    if got is None:
        sys.exit(f"FAIL {label}: the program wrote no gradient")
    if got.dtype != np.float32:
        sys.exit(f"FAIL {label}: the program's gradient is {got.dtype}, not float32")
    if got.shape != ref.shape:
        sys.exit(f"FAIL {label}: gradient shape {got.shape}, expected {ref.shape}")
    return relative_error(got, ref) if np.all(np.isfinite(got)) else math.inf


def geometric_mean(errors):
    """The error compared: the geometric mean over the draws of each draw's
    error, raised to the floor (so one exact draw does not zero it)."""
    return math.exp(sum(math.log(max(e, FLOOR)) for e in errors) / len(errors))


class Row:
    """One case: Sinter's and JAX's float32 errors of each draw, and the
    errors compared (geometric_mean)."""
    def __init__(self, label):
        self.label, self.sinter_draws, self.jax_draws = label, [], []

    def add(self, got, ref, jax32):
        self.sinter_draws.append(error(self.label, got, ref))
        self.jax_draws.append(relative_error(jax32, ref))

    @property
    def sinter(self):
        return geometric_mean(self.sinter_draws)

    @property
    def jax(self):
        return geometric_mean(self.jax_draws)

    @property
    def allowed(self):
        return FACTOR * self.jax

    @property
    def ratio(self):
        return self.sinter / self.jax

    @property
    def ok(self):
        return self.sinter <= self.allowed


def measure(workdir, examples, seed):
    """Every case's Row."""
    rng = np.random.default_rng(seed)
    missing = [c[0] for c in check_gradients.CASES if c[0] not in JAX_CASES]
    if missing:
        sys.exit(f"FAIL: no JAX model for the cases {', '.join(missing)} "
                 "(add them to JAX_CASES)")
    ops_dir = os.path.join(workdir, "ops")
    op_draws = [draw_ops(os.path.join(ops_dir, f"draw{j}"), rng) for j in range(DRAWS)]
    models = model_specs(examples, rng)
    rows = {}
    def row(label):
        return rows.setdefault(label, Row(label))
    # Two compilations at a time (the ops' program is the long one); JAX
    # works alongside.
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        ops_future = pool.submit(run_ops, ops_dir)
        model_futures = [pool.submit(run_model, workdir, name, config, defines, draws,
                                     [seed, i], source)
                         for i, (name, config, defines, draws, _, source) in
                         enumerate(models)]
        want = []
        for params, inputs, rs in op_draws:
            ref_loss, scale, ref = jax_gradients(op_loss, params, (inputs, rs), jnp.float64)
            _, _, jax32 = jax_gradients(op_loss, params, (inputs, rs), jnp.float32)
            want.append((ref_loss, float(scale), ref, jax32))
        for (sinter_loss, got), (ref_loss, scale, ref, jax32) in zip(ops_future.result(), want):
            if not abs(sinter_loss - ref_loss) <= LOSS_TOL * scale:
                sys.exit(f"FAIL ops: the float32 program's loss {sinter_loss!r} is not "
                         f"the float64 reference's {ref_loss!r}")
            for k, (name, _, _, _) in enumerate(check_gradients.CASES):
                row(name).add(got.get(f"w{k}"), ref[f"w{k}"], jax32[f"w{k}"])
        for (name, _, _, draws, loss_fn, _), future in zip(models, model_futures):
            for data, (sinter_loss, p, got) in zip(draws, future.result()):
                ref_loss, _, ref = jax_gradients(loss_fn, p, data, jnp.float64)
                _, _, jax32 = jax_gradients(loss_fn, p, data, jnp.float32)
                if not abs(sinter_loss - ref_loss) <= LOSS_TOL * abs(ref_loss):
                    sys.exit(f"FAIL {name}: the float32 program's loss {sinter_loss!r} "
                             f"is not the float64 reference's {ref_loss!r}")
                extra = sorted(set(got) - set(ref))
                if extra:
                    sys.exit(f"FAIL {name}: gradients of {extra}, not parameters of "
                             "the JAX model")
                for k in sorted(ref):
                    row(f"{name} {k}").add(got.get(k), ref[k], jax32[k])
    return list(rows.values())


def table(rows):
    width = max(len(r.label) for r in rows)
    lines = [f"{'':<{width}}  {'compared':^48}  {'median draw':^21}  {'largest draw':^21}",
             f"{'case':<{width}}  {'sinter f32':>10}  {'jax f32':>10}  {'allowed':>10}  "
             f"{'ratio':>10}  {'sinter':>10} {'jax':>10}  {'sinter':>10} {'jax':>10}"]
    for r in rows:
        lines.append(
            f"{r.label:<{width}}  {r.sinter:10.2e}  {r.jax:10.2e}  {r.allowed:10.2e}  "
            f"{r.ratio:10.2f}  {np.median(r.sinter_draws):10.2e} "
            f"{np.median(r.jax_draws):10.2e}  {max(r.sinter_draws):10.2e} "
            f"{max(r.jax_draws):10.2e}{'' if r.ok else '  FAIL'}")
    lines.append(f"(compared: the geometric mean over {DRAWS} draws of each draw's error, "
                 f"at least {FLOOR:.2e}; allowed: {FACTOR}x JAX's)")
    return "\n".join(lines)


def main():
    args = [a for a in sys.argv[1:] if a != "--table"]
    workdir, examples = args[0], args[1]
    seed = test_seed(args, 2)
    print(f"seed {seed} (rerun with: check_gradients_f32.py WORKDIR EXAMPLES_DIR {seed})")
    start = time.time()
    rows = measure(workdir, examples, seed)
    if "--table" in sys.argv:
        print(table(rows))
    failed = [r for r in rows if not r.ok]
    if failed:
        sys.stderr.write(f"{len(failed)} of {len(rows)} float32 gradients are further "
                         f"from float64 than {FACTOR}x JAX float32's error (errors "
                         f"below {FLOOR:.2e} count as that):\n{table(failed)}\n")
        sys.exit(1)
    worst = max(rows, key=lambda r: r.ratio)
    print(f"{len(rows)} float32 gradients within {FACTOR}x of JAX float32's error "
          f"(worst {worst.label}: {worst.sinter:.2e} vs {worst.jax:.2e}; "
          f"{DRAWS} draws, {time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
