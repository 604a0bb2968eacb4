"""The examples, compiled and evaluated at initialisation on random data,
against the JAX models of models_jax.py on the same weights (read back from
the safetensors file the program wrote) and the same batches.

    python3 check_examples.py WORKDIR EXAMPLES_DIR [SEED]

The loss and metrics must agree within 1e-5 relative.
"""
import os
import sys

import numpy as np

import models_jax
from sinter_testing import (check_close, npy_feeds, read_safetensors, run, run_eval,
                            seeded_rng)

TOL = 1e-5


def check(name, workdir, config, data, batches, micro, reference, seed):
    """Compiles the example `config` with B = `micro`, evaluates `batches`
    micro-batches of `data` and compares with `reference(params, *inputs)`."""
    work = os.path.join(workdir, name)
    npy = npy_feeds(work, data)
    overlay = os.path.join(work, "eval.pbtxt")
    with open(overlay, "w") as f:
        f.write(f"data {{ eval {{ {npy}}} }}\neval {{ batches: {batches} }}\n"
                f"seed: {seed}\n")
    prog = os.path.join(work, "prog")
    run(["sinterc", "--config", config, f"-DB={micro}", "-o", prog])
    params_file = os.path.join(work, "init.safetensors")
    loss, metrics = run_eval(prog, "--config", overlay, "--save", params_file)
    params = {k: np.asarray(v, np.float64) if v.dtype.kind == "f" else v
              for k, v in read_safetensors(params_file).items()}
    want_loss, want_metrics = 0.0, {}
    for j in range(batches):
        batch = [a[j * micro:(j + 1) * micro] for a in data.values()]
        batch = [np.asarray(b, np.float64) if b.dtype.kind == "f" else b for b in batch]
        l, m = reference(params, *batch)
        want_loss += float(l) / batches
        for k, v in m.items():
            want_metrics[k] = want_metrics.get(k, 0.0) + float(v) / batches
    err = check_close(f"{name} loss", loss, want_loss, TOL)
    for k, v in want_metrics.items():
        check_close(f"{name} {k}", metrics[k], v, TOL)
    print(f"{name}: loss {loss:.6f} matches JAX {want_loss:.6f} "
          f"(relative error {err:.1e})")


def main():
    workdir, examples = sys.argv[1], sys.argv[2]
    seed, rng = seeded_rng(sys.argv, 3)

    check("mlp", workdir, os.path.join(examples, "mlp/mlp.pbtxt"),
          {"x": rng.uniform(0, 1, (96, 64)).astype(np.float32),
           "y": rng.integers(0, 10, 96).astype(np.int32)},
          3, 32, models_jax.mlp, seed)
    check("resnet", workdir, os.path.join(examples, "resnet/resnet.pbtxt"),
          {"x": rng.standard_normal((16, 3, 32, 32)).astype(np.float32),
           "y": rng.integers(0, 10, 16).astype(np.int32)},
          2, 8, models_jax.resnet18, seed)
    tokens = rng.integers(0, 256, (16, 33)).astype(np.int32)
    check("gpt_tiny", workdir, os.path.join(examples, "gpt/gpt_tiny.pbtxt"),
          {"idx": tokens[:, :32], "targets": tokens[:, 1:]},
          2, 8, lambda p, i, t: models_jax.gpt(p, i, t, heads=4, layers=2), seed)


if __name__ == "__main__":
    main()
