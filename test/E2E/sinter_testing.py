"""Helpers for end-to-end tests: compile a model with sinterc, run the
program, read and write the files it uses (npy, safetensors)."""
import json
import os
import re
import struct
import subprocess
import sys
import time

import numpy as np

SAFETENSORS_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16,
    "I64": np.int64, "I32": np.int32, "BOOL": np.bool_,
}


# gpt.sn at a size the tests train in seconds.
TINY_GPT_SETS = ('set { key: "vocab" value: "256" } set { key: "ctx" value: "64" } '
                 'set { key: "dim" value: "64" } set { key: "heads" value: "4" } '
                 'set { key: "layers" value: "2" } shapes { key: "T" value: 32 }\n')


def write_text(path, text):
    with open(path, "w") as f:
        f.write(text)


def test_seed(args, index):
    """The seed of a randomized test: args[index] when given, else
    SINTER_TEST_SEED ("random" draws one from the clock), else a fixed seed,
    so that a suite run is reproducible. Tests print the seed they use."""
    if len(args) > index:
        return int(args[index])
    chosen = os.environ.get("SINTER_TEST_SEED", "")
    if chosen == "random":
        return time.time_ns() % 2**32
    return int(chosen) if chosen else 20261201


def seeded_rng(args, index, rerun=""):
    """The test's seed (see test_seed) and a NumPy generator drawn from it;
    prints the seed, and `rerun`, the command that repeats the draw."""
    seed = test_seed(args, index)
    print(f"seed {seed}" + (f" (rerun with: {rerun} {seed})" if rerun else ""))
    return seed, np.random.default_rng(seed)


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: array} in the safetensors layout, with an optional
    {key: string} `__metadata__`."""
    header, offset, blobs = {}, 0, []
    if metadata:
        header["__metadata__"] = metadata
    names = {v: k for k, v in SAFETENSORS_DTYPES.items()}
    for name in sorted(tensors):
        # ascontiguousarray makes a 0-d array 1-d: take the shape before it.
        shape = list(np.shape(tensors[name]))
        a = np.ascontiguousarray(tensors[name])
        data = a.tobytes()
        header[name] = {"dtype": names[a.dtype.type], "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def _read_one(path):
    """({name: array}, metadata) of one safetensors file."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        dtype = SAFETENSORS_DTYPES[info["dtype"]]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=dtype).reshape(
            info["shape"])
    return out, header.get("__metadata__", {})


def read_safetensors(path):
    """Reads a safetensors file into {name: array}. A Sinter file whose
    metadata has "pieces": W also holds the tensors sharded over W ranks,
    each in W pieces beside it (PATH without .safetensors, then
    .piece-R-of-W.safetensors): piece R holds its slice of the tensor
    flattened, and the tensor's shape ("shape.NAME": "d0,d1")."""
    out, meta = _read_one(path)
    if "pieces" not in meta:
        return out
    w = int(meta["pieces"])
    stem = path[:-len(".safetensors")]
    slices = {}
    for r in range(w):
        piece, piece_meta = _read_one(f"{stem}.piece-{r}-of-{w}.safetensors")
        for name, values in piece.items():
            shape = piece_meta["shape." + name]
            dims = [int(d) for d in shape.split(",")] if shape else []
            slices.setdefault(name, (dims, []))[1].append(values)
    for name, (dims, parts) in slices.items():
        out[name] = np.concatenate(parts).reshape(dims)
    return out


def npy_feeds(folder, arrays):
    """Saves {input: array} as FOLDER/INPUT.npy; returns the config's feeds
    of them (`npy { input: ... path: ... }` each)."""
    os.makedirs(folder, exist_ok=True)
    feeds = ""
    for key, array in arrays.items():
        np.save(os.path.join(folder, f"{key}.npy"), array)
        feeds += f'npy {{ input: "{key}" path: "{folder}/{key}.npy" }} '
    return feeds


def run(cmd, **kw):
    result = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.stderr.write(f"command failed ({result.returncode}): {' '.join(cmd)}\n")
        sys.stderr.write(result.stdout + result.stderr)
        sys.exit(1)
    return result.stdout


def compile_program(workdir, source, config, name="prog"):
    """Writes model.sn and train.pbtxt into workdir and builds the program."""
    os.makedirs(workdir, exist_ok=True)
    sn = os.path.join(workdir, "model.sn")
    cfg = os.path.join(workdir, "train.pbtxt")
    with open(sn, "w") as f:
        f.write(source)
    with open(cfg, "w") as f:
        f.write('model: "model.sn"\n' + config)
    prog = os.path.join(workdir, name)
    run(["sinterc", "--config", cfg, "-o", prog])
    return prog


EVAL_LINE = re.compile(r"^eval: loss (\S+)((?:  \S+ \S+)*)  \(")


def run_eval(prog, *args):
    """Runs `prog --eval` and returns (loss, {metric: value})."""
    out = run([prog, "--eval", *args])
    for line in out.splitlines():
        m = EVAL_LINE.match(line)
        if m:
            fields = m.group(2).split()
            return float(m.group(1)), {fields[i]: float(fields[i + 1])
                                       for i in range(0, len(fields), 2)}
    sys.exit(f"no eval line in the output of {prog}:\n{out}")


def relative_error(got, want):
    """max |got - want| / max |want|, the measure the tolerances speak of."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    scale = max(float(np.max(np.abs(want))) if want.size else 0.0, 1e-30)
    return float(np.max(np.abs(got - want))) / scale if want.size else 0.0


def check_close(what, got, want, tol):
    """Fails unless every element is finite and within `tol` relative error."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        sys.exit(f"FAIL {what}: shape {got.shape}, expected {want.shape}")
    if not np.all(np.isfinite(got.astype(np.float64))):
        sys.exit(f"FAIL {what}: non-finite values")
    err = relative_error(got, want)
    if not err <= tol:
        sys.exit(f"FAIL {what}: relative error {err:.3g} > {tol:g}")
    return err
