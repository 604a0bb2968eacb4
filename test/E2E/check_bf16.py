"""precision { compute: BF16 }: every matmul reads its inputs rounded to bf16
and sums in f32.

    python3 check_bf16.py WORKDIR EXAMPLES_DIR [SEED]

1. One matmul, exactly. The model is loss = sum((x @ w^T) * r) with r's
   values bf16 numbers, so the program's weight gradient is r^T @ bf16(x),
   products of bf16 values summed in f32. Against that sum in float64 (x
   rounded to nearest bf16, ties to even, in NumPy) the gradient and the
   loss must be within float32's error (1e-5 relative); the same program
   in f32 is about 1e-3 away (x not rounded), and so would be one that
   truncated x or summed in bf16.

2. Whole models (the mlp and the small gpt of check_gradients_f32.py): each
   parameter's gradient against the float64 gradient of the unrounded
   model, within 3x of the error of JAX computing the same model with its
   matmuls' inputs in bf16 (jnp.matmul of bf16 arrays into f32) and the
   rest in float32, both as geometric means over the draws. The loss must
   be within 2e-2 of the float64 loss.

3. precision { activations: BF16 }: the one matmul's loss is the sum of its
   products rounded to bf16 once (within 1e-5), where the program without
   it is at least 10x further; and the whole models as in 2, against JAX
   whose linear layers and language-model head round their f32 sums (bias,
   rounded to bf16, added) to bf16 as torch.autocast's do.

4. precision { residual: BF16 } too: a residual stream through two layers
   is rounded to bf16 entering the first and after each sum, and so are the
   gradients through those points (the loss and both layers' gradients
   against NumPy, where the program without it is 10x further); and the
   models as in 3, against JAX that
   also rounds the residual stream to bf16 (the embeddings' sum entering the
   first layer, each residual connection's sum), whose gradients JAX then
   rounds the same way.
"""
import math
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

import check_gradients_f32 as f32check
import models_jax  # also enables float64 in JAX
from sinter_testing import compile_program, relative_error, seeded_rng, write_safetensors

FACTOR = 3
LOSS_TOL = 2e-2
BF16 = ["--set", "precision.compute=BF16"]
ACTIVATIONS = ["--set", "precision.activations=BF16"]
RESIDUAL = ["--set", "precision.residual=BF16"]


def to_bf16(x):
    """x (float32) rounded to the nearest bf16, ties to even, as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


ONE_MATMUL = """
model one_matmul {
  input x: f32[B, 64]
  input r: f32[B, 48]
  param w: f32[48, 64] = normal(0.0, 1.0)
  loss sum((x @ transpose(w)) * r)
}
"""


def check_one_matmul(workdir, rng, activations=False):
    B = 16
    x = rng.standard_normal((B, 64)).astype(np.float32)
    r = to_bf16(rng.standard_normal((B, 48)).astype(np.float32))
    w = rng.standard_normal((48, 64)).astype(np.float32)
    x16, w16 = to_bf16(x).astype(np.float64), to_bf16(w).astype(np.float64)
    product = x16 @ w16.T
    want_loss = float(np.sum((to_bf16(product) if activations else product) * r))
    want_grad = r.astype(np.float64).T @ x16
    data = f32check.write_data(workdir, {"x": x, "r": r})
    init = os.path.join(workdir, "w.safetensors")
    write_safetensors(init, {"w": w})
    config = f"batch {{ global: {B} micro: {B} }}\n"
    errors = {}
    precisions = (("bf16", "precision { compute: BF16 activations: BF16 }\n"),
                  ("f32", "precision { compute: BF16 }\n")) if activations else \
        (("bf16", "precision { compute: BF16 }\n"), ("f32", ""))
    for name, precision in precisions:
        prog = compile_program(os.path.join(workdir, name), ONE_MATMUL, config + precision)
        loss, grads = f32check.sinter_gradients(prog, os.path.join(workdir, name),
                                                "--config", data, "--init", init)
        errors[name] = (abs(loss - want_loss) / abs(want_loss),
                        relative_error(grads["w"], want_grad))
    loss_err, grad_err = errors["bf16"]
    if activations:
        other = errors["f32"][0]
        if not loss_err <= 1e-5:
            sys.exit(f"FAIL one matmul: with activations BF16 the loss is {loss_err:.2e} "
                     "from the sum of the products rounded to bf16")
        if not other > 10 * loss_err:
            sys.exit(f"FAIL one matmul: the loss without activations BF16 ({other:.2e}) "
                     f"is as close to the rounded products' sum as with it ({loss_err:.2e})")
        print(f"one matmul: activations BF16 loss {loss_err:.1e} from the sum of the "
              f"bf16-rounded products (unrounded: {other:.1e})")
        return
    if not (loss_err <= 1e-5 and grad_err <= 1e-5):
        sys.exit(f"FAIL one matmul: the bf16 program is {grad_err:.2e} (gradient) and "
                 f"{loss_err:.2e} (loss) from the product of bf16-rounded inputs in f32")
    if not errors["f32"][1] > 30 * grad_err:
        sys.exit(f"FAIL one matmul: the f32 program ({errors['f32'][1]:.2e}) is as close "
                 f"to the bf16 product as the bf16 one ({grad_err:.2e}): the check "
                 "cannot tell them apart")
    print(f"one matmul: bf16 gradient {grad_err:.1e} from its float64 sum "
          f"(f32 program: {errors['f32'][1]:.1e})")


RESIDUAL_BLOCK = """
def scaled(x) {
  param s: f32[64] = normal(0.0, 1.0)
  return x * s
}
model residual_block {
  input a: f32[B, 64]
  input r: f32[B, 64]
  x = a
  repeat 2 as i scope "h" {
    x = x + scaled(x, name="f")
  }
  loss sum(x * r)
}
"""


def check_residual_block(workdir, rng):
    """A residual stream through two layers (one repeated block), exactly:
    with residual BF16 the stream entering the first layer and each layer's
    sum are rounded to bf16, and so are the gradients flowing back through
    them. The loss and both layers' gradients against NumPy doing the same
    in float32, where the program without it is at least 10x further."""
    B = 16
    a, r = (rng.standard_normal((B, 64)).astype(np.float32) for _ in range(2))
    s0, s1 = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    x0 = to_bf16(a)
    x1 = to_bf16(x0 + x0 * s0)
    x2 = to_bf16(x1 + x1 * s1)
    want_loss = float(np.sum(x2.astype(np.float64) * r))
    g2 = to_bf16(r)                    # the gradient at the second sum
    g1 = to_bf16(g2 + g2 * s1)         # through the first layer's output
    want = {"h.1.f.s": np.sum(g2.astype(np.float64) * x1, axis=0),
            "h.0.f.s": np.sum(g1.astype(np.float64) * x0, axis=0)}
    scale = float(np.sum(np.abs(x2.astype(np.float64) * r)))
    data = f32check.write_data(workdir, {"a": a, "r": r})
    init = os.path.join(workdir, "s.safetensors")
    write_safetensors(init, {"h.0.f.s": s0, "h.1.f.s": s1})
    config = f"batch {{ global: {B} micro: {B} }}\n"
    errors = {}
    for name, extra in (("bf16", " residual: BF16"), ("f32", "")):
        precision = f"precision {{ compute: BF16 activations: BF16{extra} }}\n"
        prog = compile_program(os.path.join(workdir, name), RESIDUAL_BLOCK, config + precision)
        loss, grads = f32check.sinter_gradients(prog, os.path.join(workdir, name),
                                                "--config", data, "--init", init)
        errors[name] = [abs(loss - want_loss) / scale] + \
            [relative_error(grads[k], want[k]) for k in sorted(want)]
    ours, other = errors["bf16"], errors["f32"]
    if not all(e <= 1e-4 for e in ours):
        sys.exit(f"FAIL residual stream: with residual BF16 the loss and gradients are "
                 f"{', '.join(f'{e:.2e}' for e in ours)} from the rounded stream's")
    if not all(o > 10 * max(e, 1e-7) for o, e in zip(other, ours)):
        sys.exit(f"FAIL residual stream: without residual BF16 "
                 f"({', '.join(f'{o:.2e}' for o in other)}) the program is as close to "
                 "the rounded stream's values")
    print(f"residual stream: loss and gradients within {max(ours):.1e} of the rounded "
          f"stream's (unrounded: {min(other):.1e} or more)")


def bf16_matmul(a, b):
    return jnp.matmul(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16),
                      preferred_element_type=jnp.float32)


def rounded(y):
    return y.astype(jnp.bfloat16).astype(jnp.float32)


def autocast_matmul(a, b):
    """A product with a parameter (the only 2-D operand in these models: the
    language model head) rounded to bf16; attention's products not."""
    y = bf16_matmul(a, b)
    return rounded(y) if b.ndim == 2 else y


def autocast_linear(p, name, x):
    y = bf16_matmul(x, p[name + ".weight"].T)
    if name + ".bias" in p:
        y = y + rounded(p[name + ".bias"])
    return rounded(y)


def jax_bf16_gradients(loss_fn, params, data, activations=False, residual=False):
    """JAX's gradients of loss_fn with bf16 matmul inputs, in float32; with
    `activations`, linear layers and the head rounding their results; with
    `residual`, the residual stream rounded too."""
    cast = lambda v: jnp.asarray(v, jnp.float32) if np.asarray(v).dtype.kind == "f" else v
    p = {k: cast(v) for k, v in params.items()}
    d = jax.tree_util.tree_map(cast, data)
    linear = models_jax.linear
    models_jax.matmul = autocast_matmul if activations else bf16_matmul
    if activations:
        models_jax.linear = autocast_linear
    if residual:
        models_jax.residual = rounded
    try:
        (_, _), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, d)
    finally:
        models_jax.matmul = jnp.matmul
        models_jax.linear = linear
        models_jax.residual = lambda x: x
    return {k: np.asarray(g, np.float64) for k, g in grads.items()}


def check_models(workdir, examples, rng, seed, activations=False, residual=False):
    specs = [s for s in f32check.model_specs(examples, rng)
             if s[0] in ("mlp", "gpt_small")]
    worst = (0.0, "")
    count = 0
    nearness = {}
    args = BF16 + (ACTIVATIONS if activations else []) + (RESIDUAL if residual else [])
    where = "res" if residual else "act" if activations else "mm"
    for i, (name, config, defines, draws, loss_fn, source) in enumerate(specs):
        results = f32check.run_model(os.path.join(workdir, where),
                                     name, config, defines, draws, [seed, i], source,
                                     compile_args=args)
        errors = {}
        for data, (loss, params, got) in zip(draws, results):
            ref_loss, _, ref = f32check.jax_gradients(loss_fn, params, data, jnp.float64)
            if not abs(loss - ref_loss) <= LOSS_TOL * abs(ref_loss):
                sys.exit(f"FAIL {name}: the bf16 program's loss {loss!r} is not within "
                         f"{LOSS_TOL} of the float64 loss {ref_loss!r}")
            peer = jax_bf16_gradients(loss_fn, params, data, activations, residual)
            if residual:
                # Nearer the peer that rounds the stream than the one that
                # does not, where the two differ: the error bound alone
                # would also pass a program that kept the stream f32.
                plain = jax_bf16_gradients(loss_fn, params, data, activations)
                for k in sorted(ref):
                    if not np.array_equal(peer[k], plain[k]):
                        nearness.setdefault(name, []).append(
                            (relative_error(got[k], peer[k]), relative_error(got[k], plain[k])))
            for k in sorted(ref):
                if got.get(k) is None:
                    sys.exit(f"FAIL {name}: no gradient of {k}")
                ours = relative_error(got[k], ref[k]) if np.all(np.isfinite(got[k])) \
                    else math.inf
                errors.setdefault(k, []).append((ours, relative_error(peer[k], ref[k])))
        for k, pairs in errors.items():
            mean = lambda v: math.exp(sum(math.log(max(e, f32check.FLOOR)) for e in v)
                                      / len(v))
            ours, theirs = mean([p[0] for p in pairs]), mean([p[1] for p in pairs])
            if not ours <= FACTOR * theirs:
                sys.exit(f"FAIL {name} {k}: bf16 gradient error {ours:.2e} against "
                         f"float64, more than {FACTOR}x JAX's with bf16 matmuls "
                         f"({theirs:.2e})")
            worst = max(worst, (ours / theirs, f"{name} {k}: {ours:.1e} vs {theirs:.1e}"))
            count += 1
    for name, pairs in nearness.items():
        mean = lambda v: math.exp(sum(math.log(max(e, f32check.FLOOR)) for e in v) / len(v))
        to_rounding, to_plain = mean([p[0] for p in pairs]), mean([p[1] for p in pairs])
        if not to_rounding < to_plain / 2:
            sys.exit(f"FAIL {name}: residual BF16 gradients are {to_rounding:.2e} from JAX "
                     f"rounding its residual stream and {to_plain:.2e} from JAX not "
                     "rounding it: not clearly nearer the first")
        print(f"{name}: residual BF16 gradients {to_rounding:.1e} from JAX rounding its "
              f"residual stream, {to_plain:.1e} from JAX not rounding it")
    what = "residual BF16" if residual else "activations BF16" if activations else "bf16"
    peer = "llm.c-style" if residual else "autocast-style" if activations else "bf16-matmul"
    print(f"{count} {what} gradients within {FACTOR}x of JAX's {peer} error "
          f"(worst {worst[1]})")


def main():
    workdir, examples = sys.argv[1], sys.argv[2]
    seed, rng = seeded_rng(sys.argv, 3, "check_bf16.py WORKDIR EXAMPLES_DIR")
    check_one_matmul(os.path.join(workdir, "one"), rng)
    check_one_matmul(os.path.join(workdir, "one_act"), rng, activations=True)
    check_models(workdir, examples, rng, seed)
    check_models(workdir, examples, rng, seed, activations=True)
    check_residual_block(os.path.join(workdir, "one_res"), rng)
    check_models(workdir, examples, rng, seed, activations=True, residual=True)


if __name__ == "__main__":
    main()
