"""Initial values depend on a parameter's name only (LANGUAGE.md section 6):
two models declaring the same parameters in a different order, with
different neighbours, get identical tensors; another seed gets others.

    python3 check_init_order.py WORKDIR
"""
import os
import sys

import numpy as np

from sinter_testing import compile_program, read_safetensors, run_eval

FIRST = """import "std/nn.sn"
model m {
  input x: f32[B, 8]
  param a: f32[16, 8] = normal(0, 0.02)
  param b: f32[8] = uniform(-1, 1)
  h = linear(x, 4, name="fc")
  param c: f32[3, 5] = trunc_normal(0, 1, -2, 2)
  loss mean(x @ transpose(a)) + mean(b) + mean(h) + mean(c)
}
"""

SECOND = """import "std/nn.sn"
model m {
  input x: f32[B, 8]
  param c: f32[3, 5] = trunc_normal(0, 1, -2, 2)
  param extra: f32[100] = normal(0, 1)
  h = linear(x, 4, name="fc")
  param b: f32[8] = uniform(-1, 1)
  param a: f32[16, 8] = normal(0, 0.02)
  loss mean(x @ transpose(a)) + mean(b) + mean(h) + mean(c) + mean(extra)
}
"""


def saved(workdir, name, source, seed):
    work = os.path.join(workdir, name)
    os.makedirs(work, exist_ok=True)
    np.save(os.path.join(work, "x.npy"), np.ones((4, 8), np.float32))
    prog = compile_program(
        work, source, f'batch {{ global: 4 micro: 4 }}\nseed: {seed}\n'
        'data { eval { npy { input: "x" path: "x.npy" } } }\n')
    path = os.path.join(work, "params.safetensors")
    run_eval(prog, "--save", path)
    return read_safetensors(path)


def main():
    workdir = sys.argv[1]
    first = saved(workdir, "first", FIRST, 7)
    second = saved(workdir, "second", SECOND, 7)
    other_seed = saved(workdir, "seed8", FIRST, 8)
    for name in sorted(first):
        if not np.array_equal(first[name], second[name]):
            sys.exit(f"FAIL {name}: values depend on declaration order")
        if np.array_equal(first[name], other_seed[name]):
            sys.exit(f"FAIL {name}: values do not depend on the seed")
    if np.array_equal(first["a"][:8], first["a"][8:]):
        sys.exit("FAIL: rows of one tensor repeat")
    print(f"{len(first)} tensors identical across declaration orders, "
          "different across seeds")


if __name__ == "__main__":
    main()
