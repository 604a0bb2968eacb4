"""Checkpoints written in the background survive kills: a run saving every
step is killed (SIGKILL) at random moments, often while a checkpoint is
being written. After each kill the newest checkpoint loads, no file named
as a checkpoint is partial, and the next run removes the dead writer's
temporary file. The run resumed after the last kill computes the
uninterrupted run's losses bit for bit; a background checkpoint's bytes
equal a foreground one's.

    python3 check_checkpoint_kills.py WORKDIR EXAMPLES_DIR [SEED]
"""
import os
import re
import subprocess
import sys
import time

import numpy as np

from sinter_testing import npy_feeds, read_safetensors, run, seeded_rng, write_text

KILLS, STEPS = 8, 400
# Wide enough that a checkpoint (parameters and two moments, about 25 MB)
# takes a while to write.
SETS = ('set { key: "vocab" value: "256" } set { key: "ctx" value: "32" } '
        'set { key: "dim" value: "256" } set { key: "heads" value: "4" } '
        'set { key: "layers" value: "2" } shapes { key: "T" value: 16 }\n')


def losses(out):
    return dict(re.findall(r"^step (\d+)/\d+\s+loss (\S+)", out, re.M))


def checkpoints(ck):
    """The files named as checkpoints, oldest first (by step)."""
    if not os.path.isdir(ck):
        return []
    names = [f for f in os.listdir(ck) if re.fullmatch(r"step-\d+\.safetensors", f)]
    return sorted(names, key=lambda f: int(re.match(r"step-(\d+)", f).group(1)))


def main():
    work, examples = sys.argv[1], sys.argv[2]
    _, rng = seeded_rng(sys.argv, 3, "check_checkpoint_kills.py WORKDIR EXAMPLES_DIR")
    os.makedirs(work, exist_ok=True)
    n = 4 * STEPS
    feeds = npy_feeds(os.path.join(work, "data"),
                      {"idx": rng.integers(0, 256, (n, 16)).astype(np.int32),
                       "targets": rng.integers(0, 256, (n, 16)).astype(np.int32)})
    cfg = os.path.join(work, "train.pbtxt")
    write_text(cfg, f'model: "{examples}/gpt/gpt.sn"\n{SETS}'
               "optimizer { adamw { lr: 0.001 } }\nbatch { global: 4 micro: 4 }\n"
               f"data {{ train {{ {feeds}}} shuffle: true }}\nsteps: {STEPS}\n"
               "log { every: 1 }\n")
    prog = os.path.join(work, "prog")
    run(["sinterc", "--config", cfg, "-o", prog])
    ck = os.path.join(work, "ck")
    args = [prog, "--config", cfg, "--set", f"checkpoint.dir={ck}", "--set",
            "checkpoint.every=1", "--set", "checkpoint.keep=2", "--set", "checkpoint.resume=true"]

    stale_seen = 0
    for kill in range(KILLS):
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        # A step's line comes once its checkpoint's snapshot is taken, while
        # the file is being written: the kill follows one soon after.
        out, seen, until = "", 0, int(rng.integers(1, 30))
        while seen < until:
            line = p.stdout.readline()
            if not line:
                sys.exit(f"FAIL: kill {kill}: the run ended early:\n{out}")
            out += line
            seen += line.startswith("step ")
        time.sleep(float(rng.uniform(0, 0.03)))
        p.kill()
        p.wait()
        p.stdout.close()
        names = checkpoints(ck)
        for name in names:  # every file named a checkpoint is whole
            read_safetensors(os.path.join(ck, name))
        if not names:  # killed while writing the first: nothing is complete yet
            continue
        newest = int(re.match(r"step-(\d+)", names[-1]).group(1))
        loaded = run(args[:-2] + ["--set", "checkpoint.resume=true", "--set", f"steps={newest}"])
        stale_seen += "whose writer was killed" in loaded
        if any(".tmp." in f for f in os.listdir(ck)):
            sys.exit(f"FAIL: kill {kill}: a temporary file stayed: {os.listdir(ck)}")
        if f"at step {newest}" not in loaded:
            sys.exit(f"FAIL: kill {kill}: step {newest} did not load:\n{loaded}")
    # The rest of the run after the last kill, against the whole run.
    resumed = run(args)
    whole = run([prog, "--config", cfg])
    got, want = losses(resumed), losses(whole)
    if not got or any(got[s] != want[s] for s in got):
        sys.exit(f"FAIL: the run resumed after the kills differs:\n{resumed}")
    if any(".tmp." in f for f in os.listdir(ck)):
        sys.exit(f"FAIL: temporary files left: {os.listdir(ck)}")

    # Background and foreground checkpoints: the same bytes.
    short = ["--set", "steps=3", "--set", "checkpoint.every=3"]
    run([prog, "--config", cfg, "--set", f"checkpoint.dir={work}/bg"] + short)
    run([prog, "--config", cfg, "--set", f"checkpoint.dir={work}/fg",
         "--set", "checkpoint.background=false"] + short)
    with open(f"{work}/bg/step-3.safetensors", "rb") as a, \
            open(f"{work}/fg/step-3.safetensors", "rb") as b:
        if a.read() != b.read():
            sys.exit("FAIL: a background checkpoint differs from a foreground one")
    print(f"{KILLS} kills ({stale_seen} inside a write): the newest checkpoint always loads, "
          f"none partial; resumed steps {min(map(int, got))}-{STEPS} identical; "
          "background = foreground bytes")


if __name__ == "__main__":
    main()
