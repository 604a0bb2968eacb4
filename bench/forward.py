"""Forward-pass benchmark: the compiled eval step of examples/mlp, resnet
(CIFAR sizes) and a small gpt against PyTorch eager and JAX jit, on this
machine, same shapes, same thread count, measured in one run.

    scripts/bench.sh            (sets up a Python with torch and jax, then runs this)

Prints milliseconds per forward step (median of repeats after warm-up) and
the ratios sinter/peer: below 1 means Sinter is faster.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "E2E"))
THREADS = os.cpu_count()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import torch  # noqa: E402

import models_jax  # noqa: E402
import models_torch  # noqa: E402
from sinter_testing import read_safetensors  # noqa: E402

SINTERC = os.environ.get("SINTERC", os.path.join(ROOT, "build", "bin", "sinterc"))
EVAL = re.compile(r"\((\d+) batches, \d+ samples, ([0-9.]+) s,")


def sinter_step_ms(name, config, micro, data, workdir, steps):
    """Compiles the example with B=micro and times its eval step: the time
    of `steps` batches minus that of one (oneDNN builds its kernels in the
    first), per batch."""
    work = os.path.join(workdir, name)
    os.makedirs(work, exist_ok=True)
    npy = ""
    for k, v in data.items():
        reps = -(-micro * (steps + 1) // len(v))
        np.save(os.path.join(work, k + ".npy"), np.concatenate([v] * reps))
        npy += f'npy {{ input: "{k}" path: "{k}.npy" }} '
    overlay = os.path.join(work, "bench.pbtxt")
    with open(overlay, "w") as f:
        f.write(f"data {{ eval {{ {npy}}} }}\n")
    prog = os.path.join(work, "prog")
    subprocess.run([SINTERC, "--config", os.path.join(ROOT, "examples", config),
                    f"-DB={micro}", "-o", prog], check=True)
    params = os.path.join(work, "params.safetensors")

    def seconds(batches):
        out = subprocess.run([prog, "--eval", "--config", overlay, "--set",
                              f"eval.batches={batches}", "--save", params],
                             check=True, capture_output=True, text=True).stdout
        return float(EVAL.search(out).group(2))

    samples = []
    for _ in range(3):
        samples.append((seconds(steps + 1) - seconds(1)) / steps * 1e3)
    return statistics.median(samples), read_safetensors(params)


def time_ms(fn, steps):
    fn()
    fn()
    samples = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(steps):
            fn()
        samples.append((time.perf_counter() - start) / steps * 1e3)
    return statistics.median(samples)


def main():
    torch.set_num_threads(THREADS)
    rng = np.random.default_rng(0)
    cases = [
        ("mlp", "mlp/mlp.pbtxt", 32, 200,
         {"x": rng.uniform(0, 1, (64, 64)).astype(np.float32),
          "y": rng.integers(0, 10, 64).astype(np.int32)},
         models_torch.MLP(), models_jax.mlp),
        ("resnet18", "resnet/resnet.pbtxt", 32, 5,
         {"x": rng.standard_normal((32, 3, 32, 32)).astype(np.float32),
          "y": rng.integers(0, 10, 32).astype(np.int32)},
         models_torch.ResNet18(), models_jax.resnet18),
        ("gpt_small", "gpt/gpt_tiny.pbtxt", 8, 50,
         {"idx": rng.integers(0, 256, (8, 32)).astype(np.int32),
          "targets": rng.integers(0, 256, (8, 32)).astype(np.int32)},
         models_torch.GPT(256, 64, 64, 4, 2),
         lambda p, i, t: models_jax.gpt(p, i, t, heads=4, layers=2)),
    ]
    print(f"forward step, ms (median of 3 runs; {THREADS} threads; "
          f"torch {torch.__version__}, jax {jax.__version__})")
    print(f"{'model':<10} {'batch':>5} {'sinter':>9} {'torch':>9} {'jax':>9} "
          f"{'sinter/torch':>13} {'sinter/jax':>11}")
    with tempfile.TemporaryDirectory() as workdir:
        for name, config, micro, steps, data, torch_model, jax_model in cases:
            ms, params = sinter_step_ms(name, config, micro, data, workdir, steps)
            batch = {k: v[:micro] for k, v in data.items()}
            tb = [torch.from_numpy(v.astype(np.int64) if v.dtype.kind == "i" else v)
                  for v in batch.values()]
            torch_model.eval()
            with torch.no_grad():
                torch_ms = time_ms(lambda: torch_model(*tb), steps)
            jp = {k: jnp.asarray(v) for k, v in params.items()}
            jb = [jnp.asarray(v) for v in batch.values()]
            fwd = jax.jit(lambda p, *a: jax_model(p, *a)[0])
            jax_ms = time_ms(lambda: fwd(jp, *jb).block_until_ready(), steps)
            print(f"{name:<10} {micro:>5} {ms:>9.3f} {torch_ms:>9.3f} {jax_ms:>9.3f} "
                  f"{ms / torch_ms:>13.2f} {ms / jax_ms:>11.2f}")


if __name__ == "__main__":
    main()
