"""A tensor_map (examples/gpt/hf_gpt2.pbtxt) reads and writes another
framework's layout: a file with transformers' names and transposed linear
weights, made here from a Sinter file, gives the same eval loss under --init
as the Sinter file; --save through the map writes that layout back, tensor
for tensor. A missing or unexpected tensor is an error naming it (and the
parameter it was for), and a malformed rule is an error at its field.
(test/HF checks the same map against transformers itself.)

    python3 check_tensor_map.py WORKDIR EXAMPLES_DIR
"""
import os
import re
import subprocess
import sys

import numpy as np

from sinter_testing import read_safetensors, run, write_safetensors

TRANSPOSED = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight",
              "mlp.c_proj.weight")


def hf_layout(ours):
    """Sinter's names and layout to transformers' GPT2LMHeadModel's."""
    out = {}
    for name, a in ours.items():
        key = "transformer." + name + (".weight" if name in ("wte", "wpe") else "")
        out[key] = a.T.copy() if name.endswith(TRANSPOSED) else a
    return out


def eval_loss(out):
    return re.search(r"eval: loss (\S+)", out).group(1)


def main():
    work, examples = sys.argv[1], os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    tokens = os.path.join(work, "tokens.bin")
    np.random.default_rng(2).integers(0, 256, 8 * 32 + 1).astype(np.uint16).tofile(tokens)
    cfg = os.path.join(work, "gpt.pbtxt")
    with open(cfg, "w") as f:
        f.write(open(os.path.join(examples, "gpt", "gpt_tiny.pbtxt")).read().replace(
            'model: "gpt.sn"', f'model: "{examples}/gpt/gpt.sn"').replace(
            "data { train { synthetic { } } }",
            f'data {{ train {{ synthetic {{ }} }} '
            f'eval {{ tokens {{ path: "{tokens}" dtype: UINT16 }} }} }}\neval {{ batches: 1 }}'))
    prog = os.path.join(work, "gpt")
    run(["sinterc", "--config", cfg, "-o", prog])
    hf_map = os.path.join(examples, "gpt", "hf_gpt2.pbtxt")

    native = os.path.join(work, "native.safetensors")
    want = eval_loss(run([prog, "--eval", "--save", native]))
    ours = read_safetensors(native)
    theirs = hf_layout(ours)
    hf = os.path.join(work, "hf.safetensors")
    write_safetensors(hf, theirs, {"format": "pt"})

    # 1. --init through the map: the same model.
    got = eval_loss(run([prog, "--eval", "--config", hf_map, "--init", hf]))
    if got != want:
        sys.exit(f"FAIL: eval loss {got} from the mapped file, {want} from Sinter's")
    print(f"init: {len(theirs)} tensors in transformers' layout give Sinter's eval loss {got}")

    # 2. --save through the map writes that layout back.
    saved = os.path.join(work, "saved.safetensors")
    run([prog, "--eval", "--config", hf_map, "--init", hf, "--save", saved])
    back = read_safetensors(saved)
    if sorted(back) != sorted(theirs) or any(
            not np.array_equal(back[n], theirs[n]) for n in theirs):
        sys.exit(f"FAIL: --save through the map wrote {sorted(back)}")
    print("save: the same names, shapes and values as the file it read")

    # 3. Errors name the tensor, and the parameter it was for.
    def refused(tensors, *want):
        bad = os.path.join(work, "bad.safetensors")
        write_safetensors(bad, tensors, {"format": "pt"})
        r = subprocess.run([prog, "--eval", "--config", hf_map, "--init", bad],
                           capture_output=True, text=True)
        if r.returncode == 0 or not all(w in r.stderr for w in want):
            sys.exit(f"FAIL: expected an error with {want}, got {r.returncode}:\n{r.stderr}")
        return r.stderr.strip()

    missing = {k: v for k, v in theirs.items() if k != "transformer.h.1.mlp.c_fc.weight"}
    print("missing: " + refused(missing, "bad.safetensors", "transformer.h.1.mlp.c_fc.weight",
                                "(for 'h.1.mlp.c_fc.weight')"))
    extra = dict(theirs, **{"transformer.h.0.attn.bias": np.zeros((1, 1, 4, 4), np.float32)})
    print("unexpected: " + refused(extra, "transformer.h.0.attn.bias", "tensor_map.ignore"))
    turned = dict(theirs)
    turned["transformer.h.0.mlp.c_fc.weight"] = ours["h.0.mlp.c_fc.weight"]
    print("untransposed: " + refused(turned, "transformer.h.0.mlp.c_fc.weight", "f32[256, 64]",
                                     "needs [64, 256] (transposed)"))
    rules = os.path.join(work, "rules.pbtxt")
    with open(rules, "w") as f:
        f.write('tensor_map {\n  rule { param: "h.*.ln_1.weight" file: "ln_1" }\n}\n')
    r = subprocess.run([prog, "--eval", "--config", rules], capture_output=True, text=True)
    if r.returncode == 0 or "rules.pbtxt:2:" not in r.stderr or "one '*' each" not in r.stderr:
        sys.exit(f"FAIL: a rule with one '*': {r.returncode}\n{r.stderr}")
    print("rule: " + r.stderr.strip().split(": ", 1)[1])


if __name__ == "__main__":
    main()
