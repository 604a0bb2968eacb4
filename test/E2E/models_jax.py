"""JAX implementations of the example models (examples/mlp, resnet, gpt), the
reference the compiled programs are checked against. Parameters are the
dicts read from the safetensors files the programs write, keyed by Sinter's
(PyTorch's) names; everything is computed in float64."""
import math

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

# Every product of two matrices goes through this function, so that a check
# can compute them under another precision policy (check_bf16.py).
matmul = jnp.matmul
# What the residual stream keeps of each value (a check may round it).
residual = lambda x: x  # noqa: E731


def linear(p, name, x):
    y = matmul(x, p[name + ".weight"].T)
    if name + ".bias" in p:
        y = y + p[name + ".bias"]
    return y


def cross_entropy(logits, y, ignore_index=None):
    logp = jax.nn.log_softmax(logits, axis=-1)
    safe = jnp.where(y == ignore_index, 0, y) if ignore_index is not None else y
    picked = jnp.take_along_axis(logp, safe[..., None], axis=-1)[..., 0]
    if ignore_index is None:
        return -picked.mean()
    mask = (y != ignore_index).astype(logp.dtype)
    return -(picked * mask).sum() / mask.sum()


def accuracy(logits, y):
    return (jnp.argmax(logits, -1) == y).mean()


# examples/mlp -------------------------------------------------------------

def mlp(p, x, y):
    h = jax.nn.relu(linear(p, "fc1", x))
    logits = linear(p, "fc2", h)
    return cross_entropy(logits, y), {"accuracy": accuracy(logits, y)}


# examples/resnet (evaluation: batch-norm uses the running statistics) ------

def conv(p, name, x, stride, padding):
    return jax.lax.conv_general_dilated(
        x, p[name + ".weight"], (stride, stride), [(padding, padding)] * 2,
        dimension_numbers=("NCHW", "OIHW", "NCHW"))


def batch_norm_eval(p, name, x, eps=1e-5):
    c = (1, -1, 1, 1)
    scale = p[name + ".weight"] / jnp.sqrt(p[name + ".running_var"] + eps)
    return x * scale.reshape(c) + (p[name + ".bias"] -
                                   p[name + ".running_mean"] * scale).reshape(c)


def basic_block(p, prefix, x, out_ch, stride):
    h = jax.nn.relu(batch_norm_eval(p, prefix + "bn1",
                                    conv(p, prefix + "conv1", x, stride, 1)))
    h = batch_norm_eval(p, prefix + "bn2", conv(p, prefix + "conv2", h, 1, 1))
    if stride != 1 or x.shape[1] != out_ch:
        x = batch_norm_eval(p, prefix + "downsample.1",
                            conv(p, prefix + "downsample.0", x, stride, 0))
    return jax.nn.relu(h + x)


def resnet18(p, x, y, width=64):
    h = jax.nn.relu(batch_norm_eval(p, "bn1", conv(p, "conv1", x, 1, 1)))
    for stage, ch in enumerate([width, 2 * width, 4 * width, 8 * width], 1):
        for i in range(2):
            stride = 2 if stage > 1 and i == 0 else 1
            h = basic_block(p, f"layer{stage}.{i}.", h, ch, stride)
    logits = linear(p, "fc", h.mean((2, 3)))
    return cross_entropy(logits, y), {"accuracy": accuracy(logits, y)}


# examples/gpt ---------------------------------------------------------------

def layer_norm(p, name, x, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / jnp.sqrt(v + eps) * p[name + ".weight"] + p[name + ".bias"]


def attention(p, name, x, heads):
    b, t, c = x.shape
    qkv = linear(p, name + ".c_attn", x)
    q, k, v = (qkv[..., i * c:(i + 1) * c].reshape(b, t, heads, c // heads)
               .transpose(0, 2, 1, 3) for i in range(3))
    s = matmul(q, k.transpose(0, 1, 3, 2)) / math.sqrt(c // heads)
    s = jnp.where(jnp.tril(jnp.ones((t, t), bool)), s, -jnp.inf)
    y = matmul(jax.nn.softmax(s, -1), v)
    return linear(p, name + ".c_proj", y.transpose(0, 2, 1, 3).reshape(b, t, c))


def gpt(p, idx, targets, heads, layers):
    t = idx.shape[1]
    x = residual(p["wte"][idx] + p["wpe"][jnp.arange(t)])
    for i in range(layers):
        x = residual(x + attention(p, f"h.{i}.attn", layer_norm(p, f"h.{i}.ln_1", x), heads))
        h = layer_norm(p, f"h.{i}.ln_2", x)
        h = jax.nn.gelu(linear(p, f"h.{i}.mlp.c_fc", h), approximate=True)
        x = residual(x + linear(p, f"h.{i}.mlp.c_proj", h))
    logits = matmul(layer_norm(p, "ln_f", x), p["wte"].T)
    return cross_entropy(logits, targets, ignore_index=-1), {}


# A small CNN with batch-norm in training mode (check_training.py) --------------

def batch_norm_train(p, name, x, eps=1e-5):
    mean = x.mean((0, 2, 3), keepdims=True)
    var = ((x - mean) ** 2).mean((0, 2, 3), keepdims=True)
    c = (1, -1, 1, 1)
    return (x - mean) / jnp.sqrt(var + eps) * p[name + ".weight"].reshape(c) + \
        p[name + ".bias"].reshape(c)


def small_cnn(p, x, y):
    h = jax.nn.relu(batch_norm_train(p, "bn", conv(p, "conv", x, 1, 1)))
    logits = linear(p, "fc", h.mean((2, 3)))
    return cross_entropy(logits, y), {"accuracy": accuracy(logits, y)}
