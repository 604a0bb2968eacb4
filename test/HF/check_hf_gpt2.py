"""Hugging Face GPT-2 weights in and out of examples/gpt, without a network.

transformers builds a GPT-2 from a config, with every weight random, and
saves it; a Sinter program of the same shapes --init's it through
examples/gpt/hf_gpt2.pbtxt. Sinter's eval loss on a batch must equal
transformers' loss on the same tokens within 1e-5; the file Sinter --save's
must load back into GPT2LMHeadModel with the same logits, and training from
it must change the logits (the file is not a copy of the one it read).

    python3 check_hf_gpt2.py WORKDIR EXAMPLES_DIR    (scripts/test-hf.sh)
"""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import torch
from transformers import GPT2Config, GPT2LMHeadModel

VOCAB, CTX, DIM, HEADS, LAYERS, T, B = 256, 64, 64, 4, 2, 32, 8


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}\n{r.stdout}{r.stderr}")
    return r.stdout


def hf_model():
    config = GPT2Config(vocab_size=VOCAB, n_positions=CTX, n_embd=DIM, n_layer=LAYERS,
                        n_head=HEADS, activation_function="gelu_new",
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        layer_norm_epsilon=1e-5, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(config)
    # Every weight random, so that a bias or a layer norm read from the wrong
    # tensor cannot go unnoticed.
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn_like(p) * (0.3 if "ln" in name else 0.05) +
                    (1.0 if "ln" in name and name.endswith("weight") else 0.0))
    return model.eval()


def hf_loss(model, idx, targets):
    """Mean cross-entropy of next-token targets, in float64 from f32 logits."""
    with torch.no_grad():
        logits = model(torch.from_numpy(idx)).logits.double()
    return float(torch.nn.functional.cross_entropy(
        logits.reshape(-1, VOCAB), torch.from_numpy(targets).reshape(-1)))


def main():
    work, examples = sys.argv[1], os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = hf_model()
    theirs = os.path.join(work, "hf")
    model.save_pretrained(theirs, safe_serialization=True)

    # One batch of B windows of T+1 tokens, as the token stream cuts them.
    tokens = np.random.default_rng(1).integers(0, VOCAB, B * T + 1).astype(np.uint16)
    tokens.tofile(os.path.join(work, "tokens.bin"))
    windows = np.stack([tokens[i * T:i * T + T + 1] for i in range(B)]).astype(np.int64)
    idx, targets = windows[:, :-1], windows[:, 1:]

    cfg = os.path.join(work, "gpt.pbtxt")
    with open(cfg, "w") as f:
        f.write(f'model: "{examples}/gpt/gpt.sn"\n'
                f'set {{ key: "vocab" value: "{VOCAB}" }} set {{ key: "ctx" value: "{CTX}" }} '
                f'set {{ key: "dim" value: "{DIM}" }} set {{ key: "heads" value: "{HEADS}" }} '
                f'set {{ key: "layers" value: "{LAYERS}" }} shapes {{ key: "T" value: {T} }}\n'
                f"batch {{ global: {B} micro: {B} }}\noptimizer {{ adamw {{ lr: 1e-2 }} }}\n"
                'data { train { tokens { path: "tokens.bin" dtype: UINT16 } } '
                'eval { tokens { path: "tokens.bin" dtype: UINT16 } } shuffle: false }\n'
                "steps: 3\nlog { every: 1 }\neval { every: 0 batches: 1 }\n")
    prog = os.path.join(work, "gpt")
    run(["sinterc", "--config", cfg, "-o", prog])
    hf_map = os.path.join(examples, "gpt", "hf_gpt2.pbtxt")
    hf_file = os.path.join(theirs, "model.safetensors")

    # 1. --init from transformers' file: the same loss.
    out = run([prog, "--eval", "--config", cfg, "--config", hf_map, "--init", hf_file])
    m = re.search(r"eval: loss (\S+)", out)
    got, want = float(m.group(1)), hf_loss(model, idx, targets)
    if abs(got - want) > 1e-5 * abs(want):
        sys.exit(f"FAIL: Sinter's eval loss {got} != transformers' {want}")
    print(f"init: Sinter's eval loss {got:.6f}, transformers' {want:.6f} "
          f"(relative difference {abs(got - want) / want:.1e})")

    # 2. --save through the map: transformers loads it, with the same logits.
    ours = os.path.join(work, "ours")
    os.makedirs(ours)
    shutil.copy(os.path.join(theirs, "config.json"), ours)
    run([prog, "--eval", "--config", cfg, "--config", hf_map, "--init", hf_file,
         "--save", os.path.join(ours, "model.safetensors")])
    back = GPT2LMHeadModel.from_pretrained(ours).eval()
    with torch.no_grad():
        a = model(torch.from_numpy(idx)).logits
        b = back(torch.from_numpy(idx)).logits
    if not torch.equal(a, b):
        sys.exit(f"FAIL: logits after the round trip differ by {float((a - b).abs().max())}")
    print("save: GPT2LMHeadModel loads Sinter's file; the logits are identical")

    # 3. Trained from it, the saved weights move, and still load.
    trained = os.path.join(work, "trained")
    os.makedirs(trained)
    shutil.copy(os.path.join(theirs, "config.json"), trained)
    run([prog, "--config", cfg, "--config", hf_map, "--init", hf_file,
         "--save", os.path.join(trained, "model.safetensors")])
    moved = GPT2LMHeadModel.from_pretrained(trained).eval()
    with torch.no_grad():
        c = moved(torch.from_numpy(idx)).logits
    if torch.equal(a, c) or not torch.isfinite(c).all():
        sys.exit("FAIL: three steps of training did not change the saved model")
    before, after = hf_loss(model, idx, targets), hf_loss(moved, idx, targets)
    if not after < before:
        sys.exit(f"FAIL: after three steps on the batch its loss went {before} -> {after}")
    print(f"train: 3 steps from the transformers weights, saved and loaded back: "
          f"loss {before:.4f} -> {after:.4f}")


if __name__ == "__main__":
    main()
