"""Recomputation (config `recompute`) trades memory for compute and changes
nothing else: for a GPT, a ResNet and a block of layer norm, batch norm and
dropout, each parameter's gradient under recompute.mode SELECTIVE and FULL
is the gradient without it, bit for bit, and so are the losses and the
parameters after steps of two micro-batches each. The activations
--report-memory gives shrink from NONE to SELECTIVE to FULL.

    python3 check_recompute.py WORKDIR EXAMPLES_DIR [SEED]
"""
import os
import re
import sys

import numpy as np

from sinter_testing import (TINY_GPT_SETS, npy_feeds, read_safetensors, run,
                            test_seed)

LAYER = """import "std/nn.sn"
def layer(x) {
  h = linear(layer_norm(x, name="ln"), 512, name="fc")
  h = dropout(relu(batch_norm(h, name="bn")), 0.25)
  return x + linear(h, 128, name="proj")
}
model m {
  input x: f32[B, 128]
  input y: i32[B]
  h = x
  repeat 3 as i scope "blk" {
    h = layer(h, name="")
  }
  loss cross_entropy(linear(h, 5, name="head"), y, reduction="mean")
}
"""

MODES = ["NONE", "SELECTIVE", "FULL"]
COMMON = ("optimizer { adamw { lr: 1e-2 weight_decay: 0.1 } }\n"
          "steps: 3\nlog { every: 1 }\nseed: 5\n")


def models(examples, work, rng):
    """(name, model file, config lines, scopes) of each model."""
    gpt_data = npy_feeds(os.path.join(work, "gpt_data"), {
        "idx": rng.integers(0, 256, (16, 32)).astype(np.int32),
        "targets": rng.integers(0, 256, (16, 32)).astype(np.int32)})
    resnet_data = npy_feeds(os.path.join(work, "resnet_data"), {
        "x": rng.standard_normal((8, 3, 32, 32)).astype(np.float32),
        "y": rng.integers(0, 10, 8).astype(np.int32)})
    layer_data = npy_feeds(os.path.join(work, "layer_data"), {
        "x": rng.standard_normal((128, 128)).astype(np.float32),
        "y": rng.integers(0, 5, 128).astype(np.int32)})
    layer_sn = os.path.join(work, "layer.sn")
    with open(layer_sn, "w") as f:
        f.write(LAYER)
    return [
        ("gpt", f"{examples}/gpt/gpt.sn",
         TINY_GPT_SETS.replace('"layers" value: "2"', '"layers" value: "3"') +
         "batch { global: 8 micro: 4 }\n"
         f"data {{ train {{ {gpt_data} }} shuffle: false }}\n", []),
        # Only two of the four stages, each of two blocks that differ.
        ("resnet", f"{examples}/resnet/resnet.sn",
         'set { key: "width" value: "8" }\nbatch { global: 8 micro: 4 }\n'
         f"data {{ train {{ {resnet_data} }} shuffle: false }}\n",
         ["layer2", "layer4"]),
        ("layer", layer_sn, "batch { global: 64 micro: 32 }\n"
         f"data {{ train {{ {layer_data} }} shuffle: false }}\n", []),
    ]


def activations(cfg):
    out = run(["sinterc", "--config", cfg, "--report-memory"])
    row = next(l for l in out.splitlines() if l.startswith("activations"))
    return float(re.search(r"([\d.]+) MiB", row).group(1))


def build(work, name, model, lines, scopes, mode):
    folder = os.path.join(work, f"{name}-{mode}")
    os.makedirs(folder, exist_ok=True)
    cfg = os.path.join(folder, "train.pbtxt")
    recompute = ""
    if mode != "NONE":
        recompute = f"recompute {{ mode: {mode} " + "".join(
            f'scopes: "{s}" ' for s in scopes) + "}\n"
    with open(cfg, "w") as f:
        f.write(f'model: "{model}"\n{lines}{COMMON}{recompute}')
    prog = os.path.join(folder, "prog")
    run(["sinterc", "--config", cfg, "-o", prog])
    return folder, cfg, prog


def outcome(folder, prog):
    """Gradients of the first micro-batch, losses and final tensors."""
    grads = os.path.join(folder, "grads")
    os.makedirs(grads, exist_ok=True)
    run([prog, "--gradients", grads])
    gradients = {f[:-4]: np.load(os.path.join(grads, f)) for f in os.listdir(grads)}
    final = os.path.join(folder, "final.safetensors")
    out = run([prog, "--save", final])
    losses = [line.split()[3] for line in out.splitlines() if line.startswith("step ")]
    return gradients, losses, read_safetensors(final)


def same_bits(what, got, want):
    if sorted(got) != sorted(want):
        sys.exit(f"FAIL: {what}: tensors {sorted(set(got) ^ set(want))} differ")
    for name in sorted(want):
        a, b = np.asarray(got[name]), np.asarray(want[name])
        if a.shape != b.shape or a.tobytes() != b.tobytes():
            diff = np.abs(a.astype(np.float64) - b.astype(np.float64)).max()
            sys.exit(f"FAIL: {what}: {name} differs (largest difference {diff:.3g})")


def main():
    work, examples = sys.argv[1], sys.argv[2]
    seed = test_seed(sys.argv, 3)
    print(f"seed {seed}")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(seed)
    for name, model, lines, scopes in models(examples, work, rng):
        base = None
        memory = []
        for mode in MODES:
            folder, cfg, prog = build(work, name, model, lines, scopes, mode)
            memory.append(activations(cfg))
            result = outcome(folder, prog)
            if len(result[1]) != 3:
                sys.exit(f"FAIL: {name} {mode}: {len(result[1])} logged steps, expected 3")
            if base is None:
                base = result
                continue
            same_bits(f"{name} {mode} gradients", result[0], base[0])
            if result[1] != base[1]:
                sys.exit(f"FAIL: {name} {mode}: losses {result[1]} != {base[1]}")
            same_bits(f"{name} {mode} trained tensors", result[2], base[2])
        if not memory[0] > memory[1] > memory[2]:
            sys.exit(f"FAIL: {name}: activations NONE, SELECTIVE, FULL = {memory} MiB")
        print(f"{name}: {len(base[0])} gradients, 3 losses and {len(base[2])} "
              f"tensors bit-identical; activations NONE {memory[0]:.2f}, "
              f"SELECTIVE {memory[1]:.2f}, FULL {memory[2]:.2f} MiB")


if __name__ == "__main__":
    main()
