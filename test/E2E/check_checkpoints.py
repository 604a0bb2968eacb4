"""Checkpoints: a run resumed from a mid-run checkpoint continues bit for
bit like the uninterrupted run; SIGINT and SIGTERM stop a run cleanly with
a checkpoint; a damaged checkpoint is an error naming it, never a silent
start from scratch; a byte changed in any tensor's data is caught by the
tensor's checksum, and the error names the file and the tensor.

    python3 check_checkpoints.py WORKDIR EXAMPLES_DIR
"""
import json
import os
import re
import signal
import struct
import subprocess
import sys

import numpy as np

from sinter_testing import read_safetensors, run, write_safetensors

STEP = re.compile(r"^step (\d+)/\d+  (loss .*)  lr")


def losses(out):
    return {int(m.group(1)): m.group(2) for m in map(STEP.match, out.splitlines()) if m}


def main():
    work, examples = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(0)
    np.save(os.path.join(work, "x.npy"), rng.uniform(0, 1, (640, 64)).astype(np.float32))
    np.save(os.path.join(work, "y.npy"), rng.integers(0, 10, 640).astype(np.int32))
    with open(os.path.join(work, "run.pbtxt"), "w") as f:
        f.write('data { train { npy { input: "x" path: "x.npy" } npy { input: "y" path: "y.npy" } } '
                'shuffle: true }\nsteps: 40\nlog { every: 1 }\neval { every: 0 }\n'
                'optimizer { adamw { lr: 0.003 } }\nseed: 5\n')
    prog = os.path.join(work, "prog")
    # The run trains with AdamW: the optimizer's kind is compiled in.
    run(["sinterc", "--config", os.path.join(examples, "mlp/mlp.pbtxt"),
         "--set", "optimizer.adamw={}", "-o", prog])
    cfg = os.path.join(work, "run.pbtxt")

    # 1. Resume from step 20 of a 40-step run gives the same losses.
    whole = losses(run([prog, "--config", cfg]))
    ck = os.path.join(work, "ck")
    out = run([prog, "--config", cfg, "--set", f"checkpoint.dir={ck}",
               "--set", "checkpoint.every=10", "--set", "checkpoint.keep=4"])
    # Each checkpoint step's line says how long training stood still for it.
    stalls = [int(m.group(1)) for m in
              re.finditer(r"^step (\d+)/40 .*  checkpoint \d+\.\d\d s$", out, re.M)]
    if stalls != [10, 20, 30, 40]:
        sys.exit(f"FAIL: checkpoint stalls reported at steps {stalls}:\n{out}")
    kept = sorted(os.listdir(ck))
    if kept != ["step-10.safetensors", "step-20.safetensors",
                "step-30.safetensors", "step-40.safetensors"]:
        sys.exit(f"FAIL: checkpoints kept: {kept}")
    for late in ("step-30.safetensors", "step-40.safetensors"):
        os.remove(os.path.join(ck, late))
    # A checkpoint killed mid-write left its temporary file: the run removes it.
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = os.path.join(ck, f".step-30.safetensors.tmp.{dead.pid}.0")
    with open(stale, "wb") as f:
        f.write(b"\0" * 1000)
    out = run([prog, "--config", cfg, "--set", f"checkpoint.dir={ck}",
               "--set", "checkpoint.resume=true"])
    if os.path.exists(stale) or f"removed {stale} (1,000 bytes)" not in out:
        sys.exit(f"FAIL: the stale temporary file was not removed and named:\n{out}")
    if "resumed from" not in out or "at step 20" not in out:
        sys.exit(f"FAIL: did not resume at step 20:\n{out}")
    resumed = losses(out)
    if sorted(resumed) != list(range(21, 41)):
        sys.exit(f"FAIL: resumed steps {sorted(resumed)}")
    for step, line in resumed.items():
        if line != whole[step]:
            sys.exit(f"FAIL: step {step} after resuming: {line} != {whole[step]}")
    print("resume: steps 21-40 identical to the uninterrupted run; a stale temporary "
          "file removed and named; the stall of each checkpoint reported")

    # 2. SIGINT and SIGTERM stop cleanly with a checkpoint.
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        sigdir = os.path.join(work, f"sig{int(sig)}")
        p = subprocess.Popen([prog, "--config", cfg, "--set", "steps=100000000",
                              "--set", f"checkpoint.dir={sigdir}"],
                             stdout=subprocess.PIPE, text=True)
        seen = 0
        while seen < 3:
            if p.stdout.readline().startswith("step "):
                seen += 1
        p.send_signal(sig)
        try:
            out, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            sys.exit(f"FAIL: no exit within 60 s of {sig.name}")
        # Between steps or inside one (then the step is dropped).
        if p.returncode != code or not re.search(r"interrupted (at|in) step", out):
            sys.exit(f"FAIL: {sig.name}: exit {p.returncode}, output:\n{out}")
        if not os.listdir(sigdir):
            sys.exit(f"FAIL: {sig.name}: no checkpoint written")
    print("signals: SIGINT and SIGTERM stop with a checkpoint (exit 130, 143)")

    # 3. A damaged checkpoint stops the run with its name.
    src = os.path.join(ck, "step-40.safetensors")
    for damage in ("truncated", "flipped"):
        dmg = os.path.join(work, "dmg-" + damage)
        os.makedirs(dmg, exist_ok=True)
        data = bytearray(open(src, "rb").read())
        if damage == "truncated":
            data = data[:len(data) // 2]
        else:
            data[20] ^= 0xFF
        open(os.path.join(dmg, "step-40.safetensors"), "wb").write(data)
        r = subprocess.run([prog, "--config", cfg, "--set", f"checkpoint.dir={dmg}",
                            "--set", "checkpoint.resume=true"],
                           capture_output=True, text=True)
        if r.returncode == 0 or "step-40.safetensors" not in r.stderr or "step 1/" in r.stdout:
            sys.exit(f"FAIL: {damage} checkpoint: exit {r.returncode}\n{r.stdout}{r.stderr}")
    print("damaged checkpoints: truncated and flipped bytes are errors naming the file")

    # 4. A flipped byte in the middle of any tensor's data, where the header
    #    still parses, is caught by the checksum the writer recorded for it.
    raw = open(src, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    unchecked = [name for name in header if f"sinter.crc32c.{name}" not in meta]
    if unchecked:
        sys.exit(f"FAIL: {src} records no checksum for {unchecked}")
    tensors = {name: info["data_offsets"] for name, info in header.items()
               if info["data_offsets"][1] > info["data_offsets"][0]}
    if not any(name.startswith("optimizer.") for name in tensors) or len(tensors) < 3:
        sys.exit(f"FAIL: expected parameters and optimizer state in {src}: {sorted(tensors)}")
    dmg = os.path.join(work, "dmg-tensor")
    os.makedirs(dmg, exist_ok=True)
    for name, (begin, end) in sorted(tensors.items()):
        data = bytearray(raw)
        data[8 + n + (begin + end) // 2] ^= 0x01
        with open(os.path.join(dmg, "step-40.safetensors"), "wb") as f:
            f.write(data)
        r = subprocess.run([prog, "--config", cfg, "--set", f"checkpoint.dir={dmg}",
                            "--set", "checkpoint.resume=true"],
                           capture_output=True, text=True)
        named = f"step-40.safetensors: tensor '{name}' is damaged: its checksum does not match"
        if (r.returncode == 0 or named not in r.stderr or "resumed from" in r.stdout
                or "step 1/" in r.stdout):
            sys.exit(f"FAIL: byte flipped in tensor '{name}': exit {r.returncode}\n"
                     f"{r.stdout}{r.stderr}")
    print(f"damaged tensors: a flipped byte in each of the {len(tensors)} tensors is an "
          "error naming the file and the tensor")

    # 5. Optimizer moments in f64 (as checkpoints held them before the update
    #    was compiled into the step) load converted, and the run continues as
    #    the uninterrupted one did.
    step20 = os.path.join(ck, "step-20.safetensors")
    meta = dict(json.loads(open(step20, "rb").read()[8:8 + struct.unpack(
        "<Q", open(step20, "rb").read()[:8])[0]])["__metadata__"])
    meta = {k: v for k, v in meta.items() if not k.startswith("sinter.crc32c.")}
    old = {name: (a.astype(np.float64) if name.startswith("optimizer.") else a)
           for name, a in read_safetensors(step20).items()}
    olddir = os.path.join(work, "f64-moments")
    os.makedirs(olddir, exist_ok=True)
    write_safetensors(os.path.join(olddir, "step-20.safetensors"), old, meta)
    out = run([prog, "--config", cfg, "--set", f"checkpoint.dir={olddir}",
               "--set", "checkpoint.resume=true"])
    resumed = losses(out)
    if sorted(resumed) != list(range(21, 41)) or any(
            line != whole[step] for step, line in resumed.items()):
        sys.exit(f"FAIL: resuming from f64 moments:\n{out}")
    print("f64 moments: converted on load, steps 21-40 identical")

    check_sharded(work, examples)


def check_sharded(work, examples):
    """6. Sharded strategies write in the background too: every rank its
    piece, rank 0 the main file once the pieces are there. The files equal
    the foreground's byte for byte, a piece of a checkpoint never completed
    is removed and named, and a run resumed from a background checkpoint
    continues bit for bit."""
    for strategy in ("ZERO1", "FULL_SHARD"):
        prog = os.path.join(work, f"prog_{strategy}")
        run(["sinterc", "--config", os.path.join(examples, "mlp/mlp.pbtxt"),
             "--set", "optimizer.adamw={}", "--set", f"parallel.strategy={strategy}",
             "--set", "parallel.world_size=2", "-o", prog])
        cfg = os.path.join(work, "run.pbtxt")
        common = ["--config", cfg, "--set", "steps=20", "--set", "checkpoint.every=5",
                  "--set", "checkpoint.keep=4"]
        files = {}
        outs = {}
        for background in ("true", "false"):
            ck = os.path.join(work, f"{strategy}_bg_{background}")
            outs[background] = run(["sinter-run", "-n", "2", prog, *common,
                                    "--set", f"checkpoint.dir={ck}",
                                    "--set", f"checkpoint.background={background}"])
            files[background] = {f: open(os.path.join(ck, f), "rb").read()
                                 for f in sorted(os.listdir(ck))}
        names = sorted(files["true"])
        if names != sorted(files["false"]) or len(names) != 12:
            sys.exit(f"FAIL: {strategy}: background {names}, foreground {sorted(files['false'])}")
        for name in names:
            if files["true"][name] != files["false"][name]:
                sys.exit(f"FAIL: {strategy}: {name} differs between background and foreground")
        if "in the background from a snapshot" not in outs["true"]:
            sys.exit(f"FAIL: {strategy}: no background snapshot announced:\n{outs['true']}")
        # Resume from step 10 (a background checkpoint) after a kill left
        # a piece of step 15 alone.
        ck = os.path.join(work, f"{strategy}_resume")
        os.makedirs(ck)
        for name in names:
            if name.startswith("step-10."):
                with open(os.path.join(ck, name), "wb") as f:
                    f.write(files["true"][name])
        orphan = os.path.join(ck, "step-15.piece-1-of-2.safetensors")
        with open(orphan, "wb") as f:
            f.write(b"\0" * 100)
        out = run(["sinter-run", "-n", "2", prog, *common, "--set", f"checkpoint.dir={ck}",
                   "--set", "checkpoint.resume=true"])
        if f"removed {orphan} (100 bytes), a piece of a checkpoint that was never completed" not in out:
            sys.exit(f"FAIL: {strategy}: the orphan piece's removal was not named:\n{out}")
        whole, resumed = losses(outs["true"]), losses(out)
        if sorted(resumed) != list(range(11, 21)) or any(
                resumed[s] != whole[s] for s in resumed):
            sys.exit(f"FAIL: {strategy}: resumed steps differ:\n{out}")
        for name in ("step-15", "step-20"):
            got = {f: open(os.path.join(ck, f), "rb").read()
                   for f in os.listdir(ck) if f.startswith(name + ".")}
            want = {f: b for f, b in files["true"].items() if f.startswith(name + ".")}
            if got != want:
                sys.exit(f"FAIL: {strategy}: resumed {name} files differ")
    print("sharded: ZERO1 and FULL_SHARD at W=2 write every rank's piece in the background, "
          "byte-identical to the foreground; an orphan piece removed and named; resume "
          "from a background checkpoint bit-exact")


if __name__ == "__main__":
    main()
