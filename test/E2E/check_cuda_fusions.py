"""Random models through the CUDA target's fusions, on the CPU: each seed
makes a chain of row and column reductions, normalisations, softmaxes,
matmuls, biases and residual adds over [B, R, C] (R and C chosen so that
rows fill a block of threads and columns split into partial sums), compiled
for the CPU and with `sinterc --cuda-on-host`; the two programs' outputs
and gradients must agree within 1e-4 of each tensor's largest element.

    python3 check_cuda_fusions.py WORKDIR FIRST_SEED COUNT

scripts/fuzz.sh cuda runs many seeds; the lit suite a few.
"""
import os
import random
import subprocess
import sys

import numpy as np

from sinter_testing import relative_error, write_safetensors

B = 4
TOLERANCE = 1e-4


def unary(h, rng, params, k, r, c):
    return rng.choice([f"exp({h} * 0.1)", f"tanh({h})", f"gelu({h})",
                       f'gelu({h}, approximate="tanh")', f"relu({h})", f"sigmoid({h})",
                       f"silu({h})", f"{h} * {h}"])


def bias(h, rng, params, k, r, c):
    params[f"b{k}"] = (c,)
    return f"{h} + reshape(b{k}, [1, 1, {c}])"


def scale(h, rng, params, k, r, c):
    params[f"g{k}"] = (c,)
    return f"{h} * reshape(g{k}, [1, 1, {c}])"


def linear(h, rng, params, k, r, c):
    if c > 1100:  # a square weight that wide makes a slow test
        return f"relu({h})"
    params[f"w{k}"] = (c, c)
    params[f"b{k}"] = (c,)
    return f"{h} @ w{k} + reshape(b{k}, [1, 1, {c}])"


def layer_norm(h, rng, params, k, r, c):
    params[f"g{k}"] = (c,)
    params[f"b{k}"] = (c,)
    return (f"({h} - reshape(layer_norm_stats({h})[0], [B, {r}, 1])) * "
            f"reshape(rsqrt(layer_norm_stats({h})[1] + 1e-5), [B, {r}, 1]) * "
            f"reshape(g{k}, [1, 1, {c}]) + reshape(b{k}, [1, 1, {c}])")


OPS = [
    unary, bias, scale, linear, layer_norm,
    lambda h, *_: f"{h} - mean({h}, axis=-1, keepdim=true)",
    lambda h, *_: f"{h} * rsqrt(mean({h} * {h}, axis=-1, keepdim=true) + 1e-5)",
    lambda h, *_: f"softmax({h})",
    lambda h, *_: f"log_softmax({h}, axis=-1)",
    lambda h, *_: f"{h} - max({h}, axis=-1, keepdim=true)",
    lambda h, *_: f"{h} + sum({h}, axis=1, keepdim=true) * 0.01",
    lambda h, rng, params, k, r, c: f"{h} * 0.5 + reshape(sum({h}, axis=-1), [B, {r}, 1]) * 0.001",
]


def model(seed):
    """(source, {param: shape}) of seed's model."""
    rng = random.Random(seed)
    r, c = rng.choice([8, 33, 256, 1024]), rng.choice([48, 64, 300, 1030, 4100])
    params = {"s0": (c,)}
    lines = [f"  h0 = x * reshape(s0, [1, 1, {c}])"]
    values = ["h0"]
    for k in range(1, rng.randint(3, 7) + 1):
        if rng.random() < 0.15:
            expr = f"{values[-1]} + {rng.choice(values)}"  # a residual add
        else:
            expr = rng.choice(OPS)(values[-1], rng, params, k, r, c)
        lines.append(f"  h{k} = {expr}")
        values.append(f"h{k}")
    source = ['import "std/nn.sn"', "model m {", f"  input x: f32[B, {r}, {c}]"]
    source += [f"  param {p}: f32[{', '.join(map(str, s))}] = zeros" for p, s in params.items()]
    source += lines
    source.append(f"  output out = {values[-1]}")
    source.append(f"  loss mean({values[-1]} * {values[-1]}) + 0.3 * mean({rng.choice(values)})")
    return "\n".join(source + ["}"]) + "\n", params


def run(cmd, cwd):
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        return f"{' '.join(cmd)} failed ({result.returncode}): {result.stderr[-400:]}"
    return None


def check(work, seed):
    """The worst relative error and its tensor, or the error of a step."""
    source, params = model(seed)
    folder = os.path.join(work, str(seed))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "m.sn"), "w") as f:
        f.write(source)
    with open(os.path.join(folder, "m.pbtxt"), "w") as f:
        f.write(f'model: "m.sn"\nbatch {{ global: {B} micro: {B} }}\n'
                "data { train { synthetic { } } }\n")
    values = np.random.default_rng(seed)
    write_safetensors(os.path.join(folder, "init.safetensors"), {
        p: (values.standard_normal(s) / (np.sqrt(s[0]) * 2 if len(s) == 2 else 1.0))
        .astype(np.float32) for p, s in params.items()})
    common = ["--config", "m.pbtxt", "--init", "init.safetensors"]
    for side, flags in (("cpu", []), ("cuda", ["--cuda-on-host"])):
        error = (run(["sinterc", "--config", "m.pbtxt", *flags, "-o", side], folder) or
                 run([f"./{side}", *common, "--gradients", f"{side}_gradients"], folder) or
                 run([f"./{side}", *common, "--eval", "--set", "eval.batches=1",
                      "--outputs", f"{side}_outputs"], folder))
        if error:
            return None, error
    worst = (0.0, "")
    for what in ("gradients", "outputs"):
        for name in sorted(os.listdir(os.path.join(folder, f"cpu_{what}"))):
            want = np.load(os.path.join(folder, f"cpu_{what}", name))
            got = np.load(os.path.join(folder, f"cuda_{what}", name))
            worst = max(worst, (relative_error(got, want), f"{what}/{name}"))
    return worst, None


def main():
    work, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    bad = 0
    for seed in range(first, first + count):
        worst, error = check(work, seed)
        if error or worst[0] > TOLERANCE:
            bad += 1
            print(f"seed {seed}: FAIL, " + (error or f"{worst[1]} off by {worst[0]:.2e}"))
            print(model(seed)[0])
        else:
            print(f"seed {seed}: pass ({worst[0]:.1e})", flush=True)
    print(f"{count - bad} of {count} random models agree")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
