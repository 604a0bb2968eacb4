"""A run asked to stop in the middle of a long step (hundreds of
micro-batches, seconds of work) drops that step at its next micro-batch and
exits within 5 s, with the checkpoint of its last complete step; a resume
from it continues bit for bit like the run that was never stopped. A second
signal exits at once. Under sinter-run, every rank stops at the same
micro-batch and the launcher reports a stop, not a lost rank.

    python3 check_interrupt.py WORKDIR EXAMPLES_DIR
"""
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np

from sinter_testing import read_safetensors, run

MODEL = """import "std/nn.sn"
model wide {
  input x: f32[B, 256]
  input y: i32[B]
  h = relu(linear(x, 2048, name="fc1"))
  h2 = relu(linear(h, 2048, name="fc2"))
  logits = linear(h2, 10, name="fc3")
  loss cross_entropy(logits, y, reduction="mean")
}
"""
MICRO, PER_STEP = 64, 256  # 256 micro-batches in a step of one rank
STEP = re.compile(r"^step (\d+)/\d+  (loss \S+)")
SECONDS_PER_STEP = re.compile(r"([0-9.]+) (m?s)/step")
# The signal goes a third of a step into step 2; below this, the next
# micro-batch boundary would come too close to the step's end.
MIN_STEP_SECONDS = 0.6


def losses(out):
    return {int(m.group(1)): m.group(2) for m in map(STEP.match, out.splitlines()) if m}


def same_tensors(a, b):
    ta, tb = read_safetensors(a), read_safetensors(b)
    return sorted(ta) == sorted(tb) and all(
        ta[n].dtype == tb[n].dtype and np.array_equal(ta[n], tb[n]) for n in ta)


def step_seconds(line):
    m = SECONDS_PER_STEP.search(line)
    return float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)


def stop_in_step_two(cmd, signals):
    """Starts cmd, waits for step 1's log line, waits a third of the time
    step 1 took (so the signal lands inside step 2 however fast this machine
    is), sends `signals` one right after the other, and returns (exit code,
    seconds from the first signal to the exit, stdout, stderr)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    lines = []
    while True:
        line = p.stdout.readline()
        if not line:
            p.wait()
            sys.exit(f"FAIL: {cmd[0]} ended before step 1:\n{''.join(lines)}"
                     f"{p.stderr.read()}")
        lines.append(line)
        if line.startswith("step 1/"):
            break
    if step_seconds(line) < MIN_STEP_SECONDS:
        p.kill()
        sys.exit(f"FAIL: step 1 took {step_seconds(line):.2f} s, too short to "
                 f"stop the next one in the middle:\n{''.join(lines)}")
    time.sleep(step_seconds(line) / 3)
    sent = time.monotonic()
    for s in signals:
        p.send_signal(s)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        sys.exit(f"FAIL: {cmd[0]} still ran 60 s after {signals[0].name}")
    return p.returncode, time.monotonic() - sent, "".join(lines) + out, err


def main():
    work, _ = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "wide.sn"), "w") as f:
        f.write(MODEL)
    cfg = os.path.join(work, "train.pbtxt")
    with open(cfg, "w") as f:
        f.write(f'model: "wide.sn"\nbatch {{ global: {MICRO * PER_STEP} micro: {MICRO} }}\n'
                'optimizer { adamw { lr: 0.001 } }\nsteps: 3\nlog { every: 1 }\nseed: 3\n')
    prog = os.path.join(work, "prog")
    run(["sinterc", "--config", cfg, "-o", prog])

    # The run that is never stopped, with a checkpoint after every step.
    ref = os.path.join(work, "ref")
    whole = run([prog, "--set", f"checkpoint.dir={ref}", "--set", "checkpoint.every=1"])

    # 1. SIGTERM one second into step 2 of one rank.
    stopped = os.path.join(work, "stopped")
    code, seconds, out, err = stop_in_step_two(
        [prog, "--set", f"checkpoint.dir={stopped}"], [signal.SIGTERM])
    if code != 143 or "interrupted in step 2: the step was dropped" not in out:
        sys.exit(f"FAIL: SIGTERM in step 2: exit {code}\n{out}{err}")
    if seconds > 5:
        sys.exit(f"FAIL: SIGTERM in step 2: the run took {seconds:.1f} s to stop")
    if sorted(os.listdir(stopped)) != ["step-1.safetensors"]:
        sys.exit(f"FAIL: SIGTERM in step 2 left {sorted(os.listdir(stopped))}")
    if not same_tensors(os.path.join(stopped, "step-1.safetensors"),
                        os.path.join(ref, "step-1.safetensors")):
        sys.exit("FAIL: the checkpoint of the stopped run is not step 1's")
    print(f"SIGTERM in a step of {PER_STEP} micro-batches ({step_seconds(out):.1f} s): "
          f"stopped in {seconds:.1f} s (exit 143) with step 1's checkpoint")

    # 2. The resume continues bit for bit.
    resumed = run([prog, "--set", f"checkpoint.dir={stopped}",
                   "--set", "checkpoint.resume=true"])
    got, want = losses(resumed), losses(whole)
    if sorted(got) != [2, 3] or any(got[s] != want[s] for s in got):
        sys.exit(f"FAIL: resumed losses {got} != {want}")
    if not same_tensors(os.path.join(stopped, "step-3.safetensors"),
                        os.path.join(ref, "step-3.safetensors")):
        sys.exit("FAIL: the resumed run's step 3 differs from the whole run's")
    print("resume: steps 2-3 and the final checkpoint identical to the run never stopped")

    # 3. A second signal does not wait for anything. (Two of the same kind
    #    sent at once would arrive as one; a user's second Ctrl-C comes later.)
    twice = os.path.join(work, "twice")
    code, seconds, out, err = stop_in_step_two(
        [prog, "--set", f"checkpoint.dir={twice}"], [signal.SIGINT, signal.SIGTERM])
    if code not in (130, 143) or "interrupted again; exiting now" not in err or seconds > 2:
        sys.exit(f"FAIL: SIGINT then SIGTERM: exit {code} after {seconds:.1f} s\n{out}{err}")
    if os.path.exists(twice) and os.listdir(twice):
        sys.exit(f"FAIL: SIGINT then SIGTERM still wrote {os.listdir(twice)}")
    print("second signal: exit at once, nothing written")

    # 4. Two ranks under sinter-run: SIGTERM to the launcher.
    ranks = os.path.join(work, "ranks")
    code, seconds, out, err = stop_in_step_two(
        ["sinter-run", "-n", "2", prog, "--set", f"checkpoint.dir={ranks}"],
        [signal.SIGTERM])
    if code != 143 or "interrupted in step 2" not in out or "stopping the run" in err:
        sys.exit(f"FAIL: SIGTERM to sinter-run: exit {code}\n{out}{err}")
    if seconds > 5 or sorted(os.listdir(ranks)) != ["step-1.safetensors"]:
        sys.exit(f"FAIL: SIGTERM to sinter-run: {seconds:.1f} s, "
                 f"left {sorted(os.listdir(ranks))}")
    print(f"sinter-run, 2 ranks: both stopped in {seconds:.1f} s (exit 143) "
          "with step 1's checkpoint")


if __name__ == "__main__":
    main()
