"""The GPU check's models, data and comparisons (scripts/gpu-bundle.sh and
scripts/gpu-check.sh). Needs NumPy only, so it runs on the GPU machine too.

    checks.py prepare DIR     models, configs, inputs and parameters of the
                              checks, with the same seed every time
    checks.py compare KIND GOT WANT TOL [FLOOR]
                              KIND npy: every GOT/NAME.npy against WANT/NAME.npy
                              KIND safetensors: every tensor of GOT against WANT
                              prints the worst relative error, exits 1 beyond TOL
                              or, for a tensor, beyond 4 times its float32 noise
                              floor (FLOOR, a JSON file of noise-floor)
    checks.py perturb IN OUT SEED
                              IN's float tensors, each element times 1 + u
                              with |u| < 1e-7 (float32's rounding), to OUT
    checks.py noise-floor OUT WANT RUN...
                              each tensor's worst relative error of the RUNs
                              (the training of WANT from perturbed starts)
                              against WANT, as JSON to OUT
    checks.py kill-rank LIMIT LOG LAUNCHER ARGS...
                              starts LAUNCHER (sinter-run -n 2 ...), kills
                              rank 1 once a step was logged, and prints
                              whether rank 0 ended within LIMIT seconds
                              naming rank 1; its output to LOG
    checks.py throughput LOG PARAMS LAYERS WIDTH AFTER
                              a GPT run's tokens/s at T=1024 (the median
                              after step AFTER) and its MFU
    checks.py llmc-tokens PATH COUNT
                              COUNT uniform GPT-2 token ids in llm.c's token
                              file format (its header, then uint16s)
    checks.py llmc-throughput LOG MICRO PARAMS LAYERS WIDTH AFTER
                              as throughput, for llm.c's train_gpt2cu log
                              (MICRO sequences a step, its ms per step)

The ops check is every operation of LANGUAGE.md section 7 on float32, as an
`output` of one model (its forward) and as a term of its loss, every input a
parameter (its gradient).
"""
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sinter_testing import read_safetensors, write_safetensors  # noqa: E402

B = 4
# (name, expression): every op on float inputs that has a gradient.
def packed_attention(causal, qkv="qkv", t=16, heads=2, d=16):
    """Attention of `heads` heads of `d` over `qkv` [B, t, 3 * heads * d],
    as std/nn.sn's attention cuts, splits and merges them."""
    c = heads * d

    def head(start):
        return (f"transpose(reshape(slice({qkv}, 2, {start}, {start + c}), [B, {t}, {heads}, {d}]), "
                "[0, 2, 1, 3])")
    return (f"reshape(transpose(scaled_dot_product_attention({head(0)}, {head(c)}, "
            f"{head(2 * c)}, causal={causal}), [0, 2, 1, 3]), [B, {t}, {c}])")


OPS = [
    ("add", "a + b"), ("sub_broadcast", "a - reshape(c, [B, 1, 4])"),
    ("mul", "a * b"), ("div", "a / p"), ("neg", "-a"), ("exp", "exp(a)"),
    ("log", "log(p)"), ("sqrt", "sqrt(p)"), ("rsqrt", "rsqrt(p)"),
    ("abs", "abs(a)"), ("tanh", "tanh(a)"), ("sigmoid", "sigmoid(a)"),
    ("relu", "relu(a)"), ("gelu", "gelu(a)"),
    ("gelu_tanh", 'gelu(a, approximate="tanh")'), ("silu", "silu(a)"),
    ("pow", "pow(p, 1.7)"), ("maximum", "maximum(a, b)"),
    ("minimum", "minimum(a, 0.1)"), ("where", "where(a > b, a, b * 2)"),
    ("matmul", "a @ w"), ("matmul_transposed", "a @ transpose(wt)"),
    ("matmul_batched", "a @ transpose(b)"),
    ("reshape", "reshape(a, [-1, 2, 6])"), ("transpose", "transpose(a, [2, 0, 1])"),
    ("concat", "concat([a, b], 1)"), ("slice", "slice(a, 2, 1, 3)"),
    ("sum", "sum(a, axis=1)"), ("mean_keepdim", "mean(a, axis=[1, 2], keepdim=true)"),
    ("max", "max(a, axis=-1)"), ("min", "min(a, axis=1)"),
    ("softmax", "softmax(a)"), ("log_softmax", "log_softmax(a, axis=1)"),
    ("conv2d", "conv2d(img, k, stride=2, padding=1)"),
    # Depthwise, two kernels a channel: generated kernels on CUDA.
    ("conv2d_depthwise", "conv2d(img, kd, stride=1, padding=1, groups=3)"),
    ("max_pool2d", "max_pool2d(img, 3, stride=2, padding=1)"),
    ("avg_pool2d", "avg_pool2d(img, 2)"), ("global_avg_pool2d", "global_avg_pool2d(img)"),
    ("batch_norm", "(img - reshape(batch_norm_stats(img, [0, 2, 3])[0], [1, 3, 1, 1])) * "
                   "reshape(rsqrt(batch_norm_stats(img, [0, 2, 3])[1] + 1e-5), [1, 3, 1, 1])"),
    # std/nn.sn's form, one set of statistics: cuDNN's batch-norm on CUDA
    # (the form above reads two and stays generated kernels).
    ("batch_norm_affine", "(img - reshape(bn_mean, [1, 3, 1, 1])) * "
                          "reshape(bnw * rsqrt(bn_var + 1e-5), [1, 3, 1, 1]) + "
                          "reshape(bnb, [1, 3, 1, 1])"),
    # Its statistics, which the fused op returns (cuDNN's saved mean and
    # 1 / sqrt(var + eps), turned into the variance).
    ("bn_mean_fused", "bn_mean"), ("bn_var_fused", "bn_var"),
    ("ln_var", "layer_norm_stats(a)[1]"), ("embedding", "embedding(ids, table)"),
    ("attention", "scaled_dot_product_attention(a, b, p)"),
    ("attention_causal", "scaled_dot_product_attention(a, b, p, causal=true)"),
    ("cross_entropy_rows", 'cross_entropy(a, yt, reduction="none", ignore_index=-1)'),
    # Rows long enough for a block of threads per output (CUDA), and an
    # embedding wider than one block of columns.
    ("sum_long", "sum(r, axis=-1)"), ("max_long", "max(r, axis=-1)"),
    ("softmax_long", "softmax(r)"), ("embedding_wide", "embedding(ids, tablew)"),
    # Heads of 16: with compute: BF16, cuDNN's fused attention on CUDA.
    ("attention_heads16", "scaled_dot_product_attention(qa, ka, va, causal=true)"),
    # GPT's form over one projection: with compute: BF16, cuDNN reads q, k
    # and v in place and keeps the statistics (graph-pack-attention).
    ("attention_packed", packed_attention("true")),
    ("attention_packed_full", packed_attention("false")),
    # Head sizes 32 and 64 in f32: Sinter's own fused kernels on CUDA, over
    # lengths that end inside a tile of 64 rows, packed and heads-major.
    ("attention_packed_d32", packed_attention("true", "qkv32", 80, 2, 32)),
    ("attention_packed_d64", packed_attention("false", "qkv64", 70, 3, 64)),
    ("attention_heads32", "scaled_dot_product_attention(qb, kb, vb, causal=true)"),
]
# Losses: batch reductions already, each a term of the loss as it is.
LOSSES = [
    ("cross_entropy", "cross_entropy(logits, y)"),
    ("cross_entropy_tokens", "cross_entropy(a, yt, ignore_index=-1)"),
    ("mse_loss", "mse_loss(a, b)"), ("bce_with_logits", "bce_with_logits(a, t01)"),
]
# Float tensors are parameters (so each gets a gradient); integers inputs.
PARAMS = {"a": (B, 3, 4), "b": (B, 3, 4), "c": (B, 4), "p": (B, 3, 4),
          "t01": (B, 3, 4), "logits": (B, 5), "img": (B, 3, 8, 8), "bnw": (3,), "bnb": (3,),
          "w": (4, 5), "wt": (5, 4), "k": (6, 3, 3, 3), "kd": (6, 1, 3, 3), "table": (10, 4),
          "r": (B, 300), "tablew": (10, 300),
          "qa": (B, 2, 16, 16), "ka": (B, 2, 16, 16), "va": (B, 2, 16, 16),
          "qkv": (B, 16, 96), "qkv32": (B, 80, 192), "qkv64": (B, 70, 576),
          "qb": (B, 2, 40, 32), "kb": (B, 2, 40, 32), "vb": (B, 2, 40, 32)}
INPUTS = {"ids": ((6,), 10), "y": ((), 5), "yt": ((3,), 4)}


def ops_source():
    lines = ['import "std/nn.sn"', "model ops {"]
    for name, (shape, _) in INPUTS.items():
        lines.append(f"  input {name}: i32[{', '.join(['B'] + [str(d) for d in shape])}]")
    for name, shape in PARAMS.items():
        lines.append(f"  param {name}: f32[{', '.join(map(str, shape))}] = zeros")
    lines.append("  bn_mean, bn_var = batch_norm_stats(img, [0, 2, 3])")
    terms = []
    for i, (name, expr) in enumerate(OPS + LOSSES):
        lines.append(f"  {name} = {expr}")
        lines.append(f"  output {name} = {name}")
        # Each term weighted differently, so no gradient cancels by symmetry.
        weight = f"{1 + i / 7:.4f}"
        if i < len(OPS):
            terms.append(f"{weight} * mean({name} * {name})")
        else:
            terms.append(f"{weight} * {name}")
    lines.append("  loss " + " + ".join(terms))
    lines.append("}")
    return "\n".join(lines) + "\n"


def prepare(work):
    rng = np.random.default_rng(20261201)
    ops = os.path.join(work, "ops")
    os.makedirs(ops, exist_ok=True)
    with open(os.path.join(ops, "ops.sn"), "w") as f:
        f.write(ops_source())
    npy = ""
    for name, (shape, bound) in INPUTS.items():
        x = rng.integers(-1 if name == "yt" else 0, bound, (B,) + shape).astype(np.int32)
        np.save(os.path.join(ops, name + ".npy"), x)
        npy += f'npy {{ input: "{name}" path: "{name}.npy" }} '
    params = {}
    for name, shape in PARAMS.items():
        x = rng.standard_normal(shape)
        if name == "p":
            x = rng.uniform(0.5, 2.0, shape)
        if name == "t01":
            x = rng.uniform(0.0, 1.0, shape)
        params[name] = x.astype(np.float32)
    write_safetensors(os.path.join(ops, "init.safetensors"), params)
    with open(os.path.join(ops, "ops.pbtxt"), "w") as f:
        f.write(f'model: "ops.sn"\nbatch {{ global: {B} micro: {B} }}\n'
                f"data {{ train {{ {npy}}} eval {{ {npy}}} }}\n")

    # 20 steps of training from fixed data: mlp on random digits, the tiny
    # GPT on synthetic tokens (drawn from the seed, the same on any device).
    mlp = os.path.join(work, "mlp")
    os.makedirs(mlp, exist_ok=True)
    np.save(os.path.join(mlp, "x.npy"), rng.uniform(0, 16, (640, 64)).astype(np.float32))
    np.save(os.path.join(mlp, "y.npy"), rng.integers(0, 10, 640).astype(np.int32))
    with open(os.path.join(mlp, "train.pbtxt"), "w") as f:
        f.write('data { train { npy { input: "x" path: "x.npy" } npy { input: "y" '
                'path: "y.npy" } } shuffle: false }\nsteps: 20\nlog { every: 5 }\n'
                "eval { every: 0 }\n")


def relative_error(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    if not np.all(np.isfinite(got)):
        return float("inf")
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-30)
    return float(np.max(np.abs(got - want))) / scale if want.size else 0.0


# A training run is chaotic where a value is a sum that cancels (the key
# bias's gradient, zero in exact arithmetic, which Adam scales up to a step
# of the learning rate; a batch-norm bias behind the next batch-norm): there
# any rounding, the CPU's own too, moves the result far. The same run from
# a start perturbed at float32's rounding measures how far; the GPU's run
# may go a few times as far, and no more.
FLOOR_FACTOR = 4


def perturb(src, dst, seed):
    rng = np.random.default_rng(int(seed))
    out = {}
    for name, x in read_safetensors(src).items():
        if x.dtype.kind == "f":
            u = rng.uniform(-1e-7, 1e-7, x.shape)
            x = (x.astype(np.float64) * (1 + u)).astype(x.dtype)
        out[name] = x
    write_safetensors(dst, out)
    return 0


def noise_floor(out, want, runs):
    w = read_safetensors(want)
    runs = [read_safetensors(r) for r in runs]
    floors = {n: max(relative_error(r[n], x) for r in runs)
              for n, x in w.items() if x.dtype.kind == "f"}
    with open(out, "w") as f:
        json.dump(floors, f, indent=0, sort_keys=True)
    return 0


def compare(kind, got, want, tol, floor_file=None):
    if kind == "npy":
        names = sorted(n[:-4] for n in os.listdir(want) if n.endswith(".npy"))
        pairs = [(n, np.load(os.path.join(got, n + ".npy")),
                  np.load(os.path.join(want, n + ".npy"))) for n in names]
    else:
        g, w = read_safetensors(got), read_safetensors(want)
        pairs = [(n, g.get(n), w[n]) for n in sorted(w)]
    floors = {}
    if floor_file:
        if not os.path.exists(floor_file):
            print(f"no noise floor {floor_file} (rebuild the bundle)")
            return 1
        with open(floor_file) as f:
            floors = json.load(f)
    worst, name, ok = 0.0, "", True
    for n, g, w in pairs:
        if g is None:
            print(f"missing {n}")
            return 1
        if w.dtype.kind not in "f":
            continue
        e = relative_error(g, w)
        ok = ok and e <= max(tol, FLOOR_FACTOR * floors.get(n, 0.0))
        if e >= worst:
            worst, name = e, n
    floor = floors.get(name, 0.0)
    noise = (f", its float32 noise floor {floor:.2e}"
             if FLOOR_FACTOR * floor > tol else "")
    print(f"{len(pairs)} tensors, worst relative error {worst:.2e} ({name}){noise}, "
          f"tolerance {tol:g}: {'pass' if ok else 'FAIL'}")
    return 0 if ok else 1


def rank_of(pid):
    """The RANK in a process's environment, or None."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            for entry in f.read().split(b"\0"):
                if entry.startswith(b"RANK="):
                    return int(entry[5:])
    except (OSError, ValueError):
        pass
    return None


def kill_rank(limit, log, command):
    limit = float(limit)
    with open(log, "w") as out:
        launcher = subprocess.Popen(command, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True)
        seen = []
        for line in launcher.stdout:
            seen.append(line)
            out.write(line)
            if line.startswith("step "):
                break
        with open(f"/proc/{launcher.pid}/task/{launcher.pid}/children") as f:
            ranks = {rank_of(int(p)): int(p) for p in f.read().split()}
        if 1 not in ranks:
            launcher.kill()
            print(f"FAILED: no rank 1 among the launcher's children ({ranks}); "
                  f"{''.join(seen[-3:]).strip()[:200]}")
            return 1
        os.kill(ranks[1], signal.SIGKILL)
        killed = time.monotonic()
        try:
            rest, _ = launcher.communicate(timeout=limit + 30)
        except subprocess.TimeoutExpired:
            launcher.kill()
            rest, _ = launcher.communicate()
        took = time.monotonic() - killed
        out.write(rest)
    said = [l for l in rest.splitlines() if "rank 0 of 2" in l and "lost rank 1" in l]
    ok = took <= limit and bool(said)
    why = said[0].strip()[:160] if said else "rank 0 did not name rank 1"
    print(f"rank 0 ended {took:.1f} s after (limit {limit:g} s): {why}: "
          f"{'pass' if ok else 'FAIL'}")
    return 0 if ok else 1


def throughput(log, params, layers, width, after):
    """Prints "TOKENS_PER_S MFU_PERCENT" of a GPT run at T=1024 from its log:
    the median of the steps' samples/s after step `after` (start-up left
    out), and 6N + 6LCT FLOPs per token over 989 TFLOP/s (dense bf16, H100
    and H200 alike)."""
    step = re.compile(r"step (\d+)/\d+ .* ([0-9.]+) samples/s")
    with open(log) as f:
        rates = [float(m.group(2)) for m in map(step.match, f)
                 if m and int(m.group(1)) > int(after)]
    print_rate(statistics.median(rates) * 1024 if rates else 0.0, params, layers, width)


def print_rate(tokens, params, layers, width):
    """Prints "TOKENS_PER_S MFU_PERCENT" at T=1024 (see throughput)."""
    flops = 6 * int(params) + 6 * int(layers) * int(width) * 1024
    print(f"{tokens:.0f} {100 * tokens * flops / 989e12:.2f}")


LLMC_MAGIC, LLMC_VERSION, LLMC_HEADER_INTS = 20240520, 1, 256


def llmc_tokens(path, count):
    """llm.c's token file: 256 int32s (magic, version, token count), then
    the tokens as uint16, uniform over GPT-2's 50,257 ids like Sinter's
    synthetic tokens."""
    count = int(count)
    header = np.zeros(LLMC_HEADER_INTS, np.int32)
    header[:3] = LLMC_MAGIC, LLMC_VERSION, count
    tokens = np.random.default_rng(20261206).integers(0, 50257, count).astype(np.uint16)
    with open(path, "wb") as f:
        f.write(header.tobytes())
        f.write(tokens.tobytes())


def llmc_throughput(log, micro, params, layers, width, after):
    """throughput's numbers for a train_gpt2cu log, whose step lines read
    "step    7/30 | loss ... | 157.25 ms | ...": MICRO x 1024 tokens over
    the median step time after step AFTER."""
    step = re.compile(r"step\s+(\d+)/\d+ \|.*\| ([0-9.]+) ms \|")
    with open(log) as f:
        ms = [float(m.group(2)) for m in map(step.match, f)
              if m and int(m.group(1)) > int(after)]
    tokens = int(micro) * 1024 * 1000 / statistics.median(ms) if ms else 0.0
    print_rate(tokens, params, layers, width)


def main():
    if len(sys.argv) == 7 and sys.argv[1] == "throughput":
        return throughput(*sys.argv[2:])
    if len(sys.argv) == 4 and sys.argv[1] == "llmc-tokens":
        return llmc_tokens(*sys.argv[2:])
    if len(sys.argv) == 8 and sys.argv[1] == "llmc-throughput":
        return llmc_throughput(*sys.argv[2:])
    if len(sys.argv) >= 3 and sys.argv[1] == "prepare":
        return prepare(sys.argv[2])
    if len(sys.argv) in (6, 7) and sys.argv[1] == "compare":
        return compare(*sys.argv[2:5], float(sys.argv[5]), *sys.argv[6:])
    if len(sys.argv) >= 5 and sys.argv[1] == "noise-floor":
        return noise_floor(sys.argv[2], sys.argv[3], sys.argv[4:])
    if len(sys.argv) == 5 and sys.argv[1] == "perturb":
        return perturb(sys.argv[2], sys.argv[3], sys.argv[4])
    if len(sys.argv) >= 5 and sys.argv[1] == "kill-rank":
        return kill_rank(sys.argv[2], sys.argv[3], sys.argv[4:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
