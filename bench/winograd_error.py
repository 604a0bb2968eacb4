"""How precise precision.convolution WINOGRAD is: one 3x3 convolution of
ResNet-18's sizes (64 channels at 32x32, 128 at 16x16, 256 at 8x8, batch
4), its output and its kernel gradient, from Sinter with DIRECT and with
WINOGRAD and from JAX in float32, each against PyTorch in float64 on the
same float32 inputs and weights.

    scripts/bench.sh winograd-error

The error of a tensor is reported two ways: over the whole tensor,
|g - ref|_2 / |ref|_2, and at its worst element, max |g - ref| / max |ref|.
Not a timing: it may run while the machine is busy.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sinter_build import ROOT, sinterc_of, take_build_dir  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "test", "E2E"))
from sinter_testing import write_safetensors  # noqa: E402

MODEL = """
import "std/nn.sn"

model one {
  input x: f32[B, C, H, H]
  input t: f32[B, C, H, H]
  y = conv2d(x, C, 3, padding=1, bias=false, name="conv")
  output y = y
  loss sum(y * t)
}
"""
SHAPES = [(64, 32), (128, 16), (256, 8)]
BATCH = 4


def sinter(prog, work, algorithm):
    """Sinter's (y, dW) with precision.convolution `algorithm`."""
    out, grads = (os.path.join(work, f"{kind}-{algorithm}") for kind in ("out", "grad"))
    common = [prog, "--init", os.path.join(work, "w.safetensors"),
              "--set", f"precision.convolution={algorithm}"]
    subprocess.run(common + ["--eval", "--set", "eval.batches=1", "--outputs", out],
                   check=True, capture_output=True)
    subprocess.run(common + ["--gradients", grads], check=True, capture_output=True)
    return np.load(os.path.join(out, "y.npy")), np.load(os.path.join(grads, "conv.weight.npy"))


def references(x, t, w):
    """PyTorch's (y, dW) in float64, and JAX's in float32."""
    import jax
    import jax.numpy as jnp
    import torch

    x64, t64 = torch.from_numpy(x.astype(np.float64)), torch.from_numpy(t.astype(np.float64))
    w64 = torch.from_numpy(w.astype(np.float64)).requires_grad_()
    y64 = torch.nn.functional.conv2d(x64, w64, padding=1)
    (y64 * t64).sum().backward()

    def forward(w, x):
        return jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                            precision=jax.lax.Precision.HIGHEST)
    yj = forward(jnp.asarray(w), jnp.asarray(x))
    dwj = jax.grad(lambda w: jnp.sum(forward(w, jnp.asarray(x)) * jnp.asarray(t)))(
        jnp.asarray(w))
    return ((y64.detach().numpy(), w64.grad.numpy()), (np.asarray(yj), np.asarray(dwj)))


def errors(got, ref):
    got = got.astype(np.float64)
    return (np.linalg.norm(got - ref) / np.linalg.norm(ref),
            np.abs(got - ref).max() / np.abs(ref).max())


def main():
    args = sys.argv[1:]
    sinterc = sinterc_of(take_build_dir(args))
    rng = np.random.default_rng(0)
    print("error against float64 (whole tensor |e|_2/|ref|_2 ; worst element "
          "max|e|/max|ref|)")
    print(f"{'conv':<16} {'tensor':<7} {'direct':>19} {'winograd':>19} {'jax f32':>19}"
          f" {'winograd/jax':>13}")
    for channels, size in SHAPES:
        with tempfile.TemporaryDirectory() as work:
            x = rng.standard_normal((BATCH, channels, size, size)).astype(np.float32)
            t = rng.standard_normal(x.shape).astype(np.float32)
            w = (rng.standard_normal((channels, channels, 3, 3))
                 / np.sqrt(9 * channels)).astype(np.float32)
            np.save(os.path.join(work, "x.npy"), x)
            np.save(os.path.join(work, "t.npy"), t)
            write_safetensors(os.path.join(work, "w.safetensors"), {"conv.weight": w})
            with open(os.path.join(work, "one.sn"), "w") as f:
                f.write(MODEL)
            with open(os.path.join(work, "one.pbtxt"), "w") as f:
                f.write(f'model: "one.sn"\nshapes {{ key: "C" value: {channels} }}\n'
                        f'shapes {{ key: "H" value: {size} }}\nbatch {{ global: {BATCH} }}\n'
                        f'data {{ train {{ npy {{ input: "x" path: "{work}/x.npy" }} '
                        f'npy {{ input: "t" path: "{work}/t.npy" }} }}\n'
                        f'eval {{ npy {{ input: "x" path: "{work}/x.npy" }} '
                        f'npy {{ input: "t" path: "{work}/t.npy" }} }} }}\n')
            prog = os.path.join(work, "one")
            subprocess.run([sinterc, "--config", os.path.join(work, "one.pbtxt"), "-o", prog],
                           check=True)
            direct, winograd = sinter(prog, work, "DIRECT"), sinter(prog, work, "WINOGRAD")
            ref, jax_f32 = references(x, t, w)
            for i, tensor in enumerate(["y", "dW"]):
                e = [errors(r[i], ref[i]) for r in (direct, winograd, jax_f32)]
                cells = " ".join(f"{a:9.2e} ;{b:9.2e}" for a, b in e)
                ratio = f"{e[1][0] / e[2][0]:5.1f} ;{e[1][1] / e[2][1]:5.1f}"
                print(f"{f'{channels} x {size}x{size}':<16} {tensor:<7} {cells} {ratio:>13}")


if __name__ == "__main__":
    main()
