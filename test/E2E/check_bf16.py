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

4. precision { residual: BF16 } too: one sum of two activations is
   rounded to bf16 where it is made and the gradient through it too (the
   loss and a gradient exactly, where the program without it is 10x
   further); and the models as in 3, against JAX that
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


RESIDUAL_SUM = """
model residual_sum {
  input a: f32[B, 64]
  input b: f32[B, 64]
  input r: f32[B, 64]
  param s: f32[64] = normal(0.0, 1.0)
  loss sum((a * s + b) * r)
}
"""


def check_residual_sum(workdir, rng):
    """A sum of two activations, exactly: with residual BF16 the loss is
    sum(bf16(a * s + b) * r) and s's gradient sum(a * bf16(r)) (the gradient
    through the sum rounded too), where the program without it is at least
    10x further from both."""
    B = 16
    a, b, r = (rng.standard_normal((B, 64)).astype(np.float32) for _ in range(3))
    s_ = rng.standard_normal(64).astype(np.float32)
    total = (a * s_ + b).astype(np.float32)
    want_loss = float(np.sum(to_bf16(total).astype(np.float64) * r))
    want_grad = np.sum(a.astype(np.float64) * to_bf16(r), axis=0)
    data = f32check.write_data(workdir, {"a": a, "b": b, "r": r})
    init = os.path.join(workdir, "s.safetensors")
    write_safetensors(init, {"s": s_})
    config = f"batch {{ global: {B} micro: {B} }}\n"
    errors = {}
    for name, extra in (("bf16", " residual: BF16"), ("f32", "")):
        precision = f"precision {{ compute: BF16 activations: BF16{extra} }}\n"
        prog = compile_program(os.path.join(workdir, name), RESIDUAL_SUM, config + precision)
        loss, grads = f32check.sinter_gradients(prog, os.path.join(workdir, name),
                                                "--config", data, "--init", init)
        errors[name] = (abs(loss - want_loss) / abs(want_loss),
                        relative_error(grads["s"], want_grad))
    (loss_err, grad_err), (other_loss, other_grad) = errors["bf16"], errors["f32"]
    if not (loss_err <= 1e-5 and grad_err <= 1e-5):
        sys.exit(f"FAIL residual sum: with residual BF16 the loss is {loss_err:.2e} and the "
                 f"gradient {grad_err:.2e} from the sum and gradient rounded to bf16")
    if not (other_loss > 10 * loss_err and other_grad > 10 * grad_err):
        sys.exit(f"FAIL residual sum: without residual BF16 ({other_loss:.2e}, "
                 f"{other_grad:.2e}) the program is as close to the rounded values")
    print(f"residual sum: loss {loss_err:.1e} and gradient {grad_err:.1e} from the sum and "
          f"its gradient rounded to bf16 (unrounded: {other_loss:.1e}, {other_grad:.1e})")


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
    check_residual_sum(os.path.join(workdir, "one_res"), rng)
    check_models(workdir, examples, rng, seed, activations=True, residual=True)


if __name__ == "__main__":
    main()
