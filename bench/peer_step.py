"""One peer's training step, in a process of its own so that its peak
resident memory is its own: PyTorch eager, torch.compile or JAX jit, on one
of the benchmark suite's models (bench/train_vs_peers.py), with the same
shapes, dtype (f32), optimizer and thread count as Sinter's step. A model
name ending in -bf16 (gpt-bf16, gpt2-bf16) computes its matmuls from bf16
inputs: PyTorch's CPU autocast, JAX's matmuls of bf16 arrays into f32.

    python3 peer_step.py torch|compile|jax mlp|resnet18[-224]|cnn|mobilenet|gpt|gpt2[-bf16] STEPS THREADS

Prints one JSON object: the first step's seconds (compilation, for the
compilers), the median milliseconds per step of three timed runs of STEPS
steps, and the process's peak resident MiB.
"""
import json
import math
import resource
import statistics
import sys
import time

import numpy as np

# The suite's models: (batch, optimizer, its settings).
OPTIMIZERS = {"mlp": ("sgd", dict(lr=0.01, momentum=0.9, weight_decay=0.0)),
              "resnet18": ("sgd", dict(lr=0.1, momentum=0.9, weight_decay=5e-4)),
              "resnet18-224": ("sgd", dict(lr=0.1, momentum=0.9, weight_decay=5e-4)),
              "cnn": ("sgd", dict(lr=0.01, momentum=0.9, weight_decay=0.0)),
              "mobilenet": ("sgd", dict(lr=0.05, momentum=0.9, weight_decay=0.0)),
              "gpt": ("adamw", dict(lr=3e-4, weight_decay=0.1)),
              "gpt2": ("adamw", dict(lr=3e-4, weight_decay=0.1)),
              "gpt2-1024": ("adamw", dict(lr=3e-4, weight_decay=0.1))}
GPTS = {"gpt": dict(vocab=50257, ctx=128, dim=256, heads=4, layers=4, t=128),
        "gpt2": dict(vocab=50257, ctx=1024, dim=768, heads=12, layers=12, t=128),
        "gpt2-1024": dict(vocab=50257, ctx=1024, dim=768, heads=12, layers=12, t=1024)}
BATCH = {"mlp": 256, "resnet18": 32, "resnet18-224": 32, "cnn": 64, "mobilenet": 64, "gpt": 8,
         "gpt2": 1, "gpt2-1024": 2}
# The conv nets' images and classes: CIFAR's, and ImageNet's for resnet18-224.
IMAGES = {"resnet18": (32, 10), "resnet18-224": (224, 1000), "cnn": (32, 10),
          "mobilenet": (32, 10)}
# bench/models/mobilenet.sn's blocks: (input channels, output channels, stride).
MOBILENET_BLOCKS = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1)]


def batch(model, rng):
    b = BATCH[model]
    if model == "mlp":
        return (rng.standard_normal((b, 784)).astype(np.float32),
                rng.integers(0, 10, b).astype(np.int64))
    if model in IMAGES:
        size, classes = IMAGES[model]
        return (rng.standard_normal((b, 3, size, size)).astype(np.float32),
                rng.integers(0, classes, b).astype(np.int64))
    tokens = rng.integers(0, GPTS[model]["vocab"], (b, GPTS[model]["t"])).astype(np.int64)
    return tokens, np.roll(tokens, -1, axis=1)


def timed(step, steps):
    start = time.perf_counter()
    step()
    first = time.perf_counter() - start
    step()
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        runs.append((time.perf_counter() - start) / steps * 1e3)
    return first, statistics.median(runs)


# PyTorch ------------------------------------------------------------------

def torch_step(model, compiled, threads, data, bf16):
    import contextlib
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import models_torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    if model == "mlp":
        net = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024),
                            nn.ReLU(), nn.Linear(1024, 10))

        def loss_of(x, y):
            return F.cross_entropy(net(x), y)
    else:
        g = GPTS.get(model)
        net = (models_torch.ResNet18(classes=IMAGES[model][1], image=IMAGES[model][0])
               if model.startswith("resnet18") else
               models_torch.SmallCNN() if model == "cnn" else
               models_torch.MobileNet(MOBILENET_BLOCKS) if model == "mobilenet" else
               models_torch.GPT(g["vocab"], g["ctx"], g["dim"], g["heads"], g["layers"]))
        loss_of = net
    net.train()
    kind, hp = OPTIMIZERS[model]
    opt = (torch.optim.SGD(net.parameters(), **hp) if kind == "sgd" else
           torch.optim.AdamW(net.parameters(), **hp))
    forward = torch.compile(loss_of) if compiled else loss_of
    tensors = [torch.from_numpy(a) for a in data]
    precision = ((lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if bf16 else
                 contextlib.nullcontext)

    def step():
        opt.zero_grad(set_to_none=True)
        with precision():
            loss = forward(*tensors)
        loss.backward()
        opt.step()
    return step


# JAX ----------------------------------------------------------------------

def jax_step(model, threads, data, bf16):
    import jax
    import jax.numpy as jnp

    def mm(a, b):
        if not bf16:
            return a @ b
        return jnp.matmul(a.astype(jnp.bfloat16), b.astype(jnp.bfloat16),
                          preferred_element_type=jnp.float32)

    rng = np.random.default_rng(0)

    def dense(fan_in, fan_out):
        bound = 1 / math.sqrt(fan_in)
        return {"w": jnp.asarray(rng.uniform(-bound, bound, (fan_in, fan_out)), jnp.float32),
                "b": jnp.zeros(fan_out, jnp.float32)}

    def xent(logits, y):
        logp = jax.nn.log_softmax(logits, -1)
        return -jnp.take_along_axis(logp, y[..., None], -1).mean()

    if model == "mlp":
        params = [dense(784, 1024), dense(1024, 1024), dense(1024, 10)]

        def loss_of(p, x, y):
            h = jax.nn.relu(x @ p[0]["w"] + p[0]["b"])
            h = jax.nn.relu(h @ p[1]["w"] + p[1]["b"])
            return xent(h @ p[2]["w"] + p[2]["b"], y)
    elif model.startswith("resnet18"):
        size, classes = IMAGES[model]
        pooled_stem = size > 32

        def conv_w(cin, cout, k):
            std = math.sqrt(2 / (cin * k * k))
            return jnp.asarray(rng.standard_normal((cout, cin, k, k)) * std, jnp.float32)

        def bn(c):
            return {"g": jnp.ones(c, jnp.float32), "b": jnp.zeros(c, jnp.float32)}

        params = {"conv1": conv_w(3, 64, 7 if pooled_stem else 3), "bn1": bn(64),
                  "blocks": [], "fc": dense(512, classes)}
        cin = 64
        for stage, cout in enumerate([64, 128, 256, 512]):
            for i in range(2):
                stride = 2 if stage and i == 0 else 1
                blk = {"c1": conv_w(cin, cout, 3), "b1": bn(cout),
                       "c2": conv_w(cout, cout, 3), "b2": bn(cout)}
                if stride != 1 or cin != cout:
                    blk["cd"], blk["bd"] = conv_w(cin, cout, 1), bn(cout)
                params["blocks"].append((blk, stride))
                cin = cout
        strides = [s for _, s in params["blocks"]]
        params["blocks"] = [b for b, _ in params["blocks"]]

        def conv(x, w, stride):
            pad = w.shape[-1] // 2
            return jax.lax.conv_general_dilated(x, w, (stride, stride), [(pad, pad)] * 2,
                                                dimension_numbers=("NCHW", "OIHW", "NCHW"))

        def norm(x, p):
            mean = x.mean((0, 2, 3), keepdims=True)
            var = ((x - mean) ** 2).mean((0, 2, 3), keepdims=True)
            return ((x - mean) * jax.lax.rsqrt(var + 1e-5) * p["g"].reshape(1, -1, 1, 1)
                    + p["b"].reshape(1, -1, 1, 1))

        def loss_of(p, x, y):
            h = jax.nn.relu(norm(conv(x, p["conv1"], 2 if pooled_stem else 1), p["bn1"]))
            if pooled_stem:
                h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 1, 3, 3), (1, 1, 2, 2),
                                          [(0, 0), (0, 0), (1, 1), (1, 1)])
            for blk, stride in zip(p["blocks"], strides):
                z = jax.nn.relu(norm(conv(h, blk["c1"], stride), blk["b1"]))
                z = norm(conv(z, blk["c2"], 1), blk["b2"])
                skip = norm(conv(h, blk["cd"], stride), blk["bd"]) if "cd" in blk else h
                h = jax.nn.relu(z + skip)
            h = h.mean((2, 3))
            return xent(h @ p["fc"]["w"] + p["fc"]["b"], y)
    elif model == "mobilenet":
        def conv_w(cin, cout, k):
            std = math.sqrt(2 / (cin * k * k))
            return jnp.asarray(rng.standard_normal((cout, cin, k, k)) * std, jnp.float32)

        def bn(c):
            return {"g": jnp.ones(c, jnp.float32), "b": jnp.zeros(c, jnp.float32)}

        blocks = MOBILENET_BLOCKS
        params = {"stem": conv_w(3, 32, 3), "bn": bn(32), "fc": dense(256, 10),
                  "blocks": [{"dw": conv_w(1, cin, 3), "b1": bn(cin),
                              "pw": conv_w(cin, cout, 1), "b2": bn(cout)}
                             for cin, cout, _ in blocks]}

        def conv(x, w, stride, groups=1):
            pad = w.shape[-1] // 2
            return jax.lax.conv_general_dilated(x, w, (stride, stride), [(pad, pad)] * 2,
                                                dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                                feature_group_count=groups)

        def unit(x, p):
            mean = x.mean((0, 2, 3), keepdims=True)
            var = ((x - mean) ** 2).mean((0, 2, 3), keepdims=True)
            return jax.nn.relu((x - mean) * jax.lax.rsqrt(var + 1e-5)
                               * p["g"].reshape(1, -1, 1, 1) + p["b"].reshape(1, -1, 1, 1))

        def loss_of(p, x, y):
            h = unit(conv(x, p["stem"], 1), p["bn"])
            for blk, (cin, _, stride) in zip(p["blocks"], blocks):
                h = unit(conv(h, blk["dw"], stride, groups=cin), blk["b1"])
                h = unit(conv(h, blk["pw"], 1), blk["b2"])
            h = h.mean((2, 3))
            return xent(h @ p["fc"]["w"] + p["fc"]["b"], y)
    elif model == "cnn":
        def conv_b(cin, cout):
            bound = 1 / math.sqrt(cin * 9)
            return {"w": jnp.asarray(rng.uniform(-bound, bound, (cout, cin, 3, 3)), jnp.float32),
                    "b": jnp.zeros(cout, jnp.float32)}

        params = {"convs": [conv_b(3, 64), conv_b(64, 128), conv_b(128, 256)],
                  "fc": dense(4096, 10)}

        def loss_of(p, x, y):
            h = x
            for c in p["convs"]:
                h = jax.lax.conv_general_dilated(h, c["w"], (1, 1), [(1, 1)] * 2,
                                                 dimension_numbers=("NCHW", "OIHW", "NCHW"))
                h = jax.nn.relu(h + c["b"].reshape(1, -1, 1, 1))
                h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                          "VALID")
            h = h.reshape(h.shape[0], -1)
            return xent(h @ p["fc"]["w"] + p["fc"]["b"], y)
    else:
        GPT = GPTS[model]
        d, v, heads = GPT["dim"], GPT["vocab"], GPT["heads"]

        def normal(*shape):
            return jnp.asarray(rng.standard_normal(shape) * 0.02, jnp.float32)

        def ln():
            return {"g": jnp.ones(d, jnp.float32), "b": jnp.zeros(d, jnp.float32)}

        params = {"wte": normal(v, d), "wpe": normal(GPT["ctx"], d), "ln_f": ln(),
                  "h": [{"ln_1": ln(), "attn": dense(d, 3 * d), "proj": dense(d, d),
                         "ln_2": ln(), "fc": dense(d, 4 * d), "fc_proj": dense(4 * d, d)}
                        for _ in range(GPT["layers"])]}

        def layer_norm(x, p):
            m = x.mean(-1, keepdims=True)
            var = ((x - m) ** 2).mean(-1, keepdims=True)
            return (x - m) * jax.lax.rsqrt(var + 1e-5) * p["g"] + p["b"]

        def loss_of(p, idx, targets):
            b, t = idx.shape
            x = p["wte"][idx] + p["wpe"][:t]
            mask = jnp.tril(jnp.ones((t, t), bool))
            for blk in p["h"]:
                qkv = mm(layer_norm(x, blk["ln_1"]), blk["attn"]["w"]) + blk["attn"]["b"]
                q, k, val = (qkv[..., i * d:(i + 1) * d].reshape(b, t, heads, d // heads)
                             .transpose(0, 2, 1, 3) for i in range(3))
                s = jnp.where(mask, mm(q, k.transpose(0, 1, 3, 2)) / math.sqrt(d // heads),
                              -jnp.inf)
                y = mm(jax.nn.softmax(s, -1), val).transpose(0, 2, 1, 3).reshape(b, t, d)
                x = x + mm(y, blk["proj"]["w"]) + blk["proj"]["b"]
                h = mm(layer_norm(x, blk["ln_2"]), blk["fc"]["w"]) + blk["fc"]["b"]
                h = jax.nn.gelu(h, approximate=True)
                x = x + mm(h, blk["fc_proj"]["w"]) + blk["fc_proj"]["b"]
            return xent(mm(layer_norm(x, p["ln_f"]), p["wte"].T), targets)

    kind, hp = OPTIMIZERS[model]
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = (zeros, zeros, jnp.zeros((), jnp.float32)) if kind == "adamw" else zeros

    def update(p, g, s):
        if kind == "sgd":
            buf = jax.tree_util.tree_map(
                lambda b, gi, pi: hp["momentum"] * b + gi + hp["weight_decay"] * pi, s, g, p)
            return jax.tree_util.tree_map(lambda pi, b: pi - hp["lr"] * b, p, buf), buf
        m, v, t = s
        t = t + 1
        m = jax.tree_util.tree_map(lambda mi, gi: 0.9 * mi + 0.1 * gi, m, g)
        v = jax.tree_util.tree_map(lambda vi, gi: 0.999 * vi + 0.001 * gi * gi, v, g)
        scale = jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        p = jax.tree_util.tree_map(
            lambda pi, mi, vi: pi * (1 - hp["lr"] * hp["weight_decay"])
            - hp["lr"] * scale * mi / (jnp.sqrt(vi) + 1e-8), p, m, v)
        return p, (m, v, t)

    @jax.jit
    def train(p, s, x, y):
        loss, g = jax.value_and_grad(loss_of)(p, x, y)
        p, s = update(p, g, s)
        return p, s, loss

    x, y = (jnp.asarray(a if a.dtype == np.float32 else a.astype(np.int32)) for a in data)
    carry = [params, state]

    def step():
        carry[0], carry[1], loss = train(carry[0], carry[1], x, y)
        loss.block_until_ready()
    return step


def main():
    framework, model, steps, threads = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    if framework == "jax":
        import os
        os.environ["XLA_FLAGS"] = (f"--xla_cpu_multi_thread_eigen=true "
                                   f"intra_op_parallelism_threads={threads}")
    if framework == "compile":
        # A cold compile, as a user's first run: no kernels from earlier runs.
        import os
        os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    bf16 = model.endswith("-bf16")
    model = model.removesuffix("-bf16")
    data = batch(model, np.random.default_rng(0))
    step = (jax_step(model, threads, data, bf16) if framework == "jax" else
            torch_step(model, framework == "compile", threads, data, bf16))
    first, ms = timed(step, steps)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"first_s": first, "ms": ms, "peak_mib": peak}))


if __name__ == "__main__":
    main()
