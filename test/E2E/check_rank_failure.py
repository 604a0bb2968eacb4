"""A rank that dies never hangs the others: killed mid-run, the remaining
ranks exit non-zero within 75 s (usually at once; a survivor whose
transport missed the closed connection waits out its 30 s collective
deadline, and sinter-run kills only after 50 s), and the launcher names the lost rank; a
run without the launcher fails the same way from the collective itself,
and the survivor names the rank it lost and its host. Both hold with every
core busy. Inconsistent variables are an error before anything starts.

    python3 check_rank_failure.py WORKDIR EXAMPLES_DIR
"""
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time

import numpy as np

from sinter_testing import run

LIMIT = 75


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_steps(proc):
    """Reads until the first step line (the ranks are in their loop)."""
    for line in proc.stdout:
        if line.startswith("step "):
            return
    proc.wait()
    sys.exit(f"FAIL: the run ended before its first step:\n{proc.stderr.read()}")


@contextlib.contextmanager
def busy_cores():
    """Every core spinning, as when a build runs beside the tests."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(os.cpu_count() or 2)]
    try:
        yield
    finally:
        for p in spinners:
            p.kill()
            p.wait()


def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


def finish(proc, started, what):
    try:
        proc.wait(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        sys.exit(f"FAIL: {what}: still running {LIMIT} s after a rank died")
    elapsed = time.monotonic() - started
    err = proc.stderr.read()
    if proc.returncode == 0:
        sys.exit(f"FAIL: {what}: exited 0 after a rank died")
    return elapsed, err


def main():
    work, examples = sys.argv[1], os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    prog = os.path.join(work, "prog")
    run(["sinterc", "--config", os.path.join(examples, "mlp", "mlp.pbtxt"), "-o", prog])
    rng = np.random.default_rng(0)
    np.save(os.path.join(work, "x.npy"), rng.uniform(0, 1, (256, 64)).astype(np.float32))
    np.save(os.path.join(work, "y.npy"), rng.integers(0, 10, 256).astype(np.int32))
    data = os.path.join(work, "data.pbtxt")
    with open(data, "w") as f:
        f.write('data { train { npy { input: "x" path: "x.npy" } '
                'npy { input: "y" path: "y.npy" } } }\n')
    args = [prog, "--config", data, "--set", "steps=100000000", "--set",
            "log.every=200", "--set", "eval.every=0"]
    cwd = work

    with busy_cores():
        check_launcher(args, cwd)
        check_without_launcher(args, cwd)

    # 3. Inconsistent variables.
    env = dict(os.environ, RANK="2", WORLD_SIZE="2")
    bad = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if bad.returncode == 0 or "RANK=2 is not below WORLD_SIZE=2" not in bad.stderr:
        sys.exit(f"FAIL: inconsistent variables: {bad.returncode} {bad.stderr}")
    print("variables: " + bad.stderr.strip())


def check_launcher(args, cwd):
    """1. Under sinter-run: kill rank 1."""
    launcher = subprocess.Popen(["sinter-run", "-n", "2", *args], cwd=cwd,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    wait_for_steps(launcher)
    ranks = children(launcher.pid)
    victim = ranks[-1]
    os.kill(victim, signal.SIGKILL)
    started = time.monotonic()
    elapsed, err = finish(launcher, started, "sinter-run")
    m = re.search(r"sinter-run: rank (\d+) \(pid (\d+)\) was killed by signal 9", err)
    if not m or int(m.group(2)) != victim:
        sys.exit(f"FAIL: sinter-run did not name the lost rank (pid {victim}):\n{err}")
    if "rank 0 of 2" not in err or "lost rank 1 (127.0.0.1)" not in err:
        sys.exit(f"FAIL: under sinter-run, rank 0 did not name the rank it lost:\n{err}")
    print(f"launcher: rank {m.group(1)} killed; the run stopped in {elapsed:.1f} s "
          f"(exit {launcher.returncode}) naming it")


def check_without_launcher(args, cwd):
    """2. Without a launcher (torchrun-style variables): rank 0 notices itself."""
    port = free_port()
    procs = []
    for rank in (0, 1):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen(args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    wait_for_steps(procs[0])
    procs[1].kill()
    procs[1].wait()
    started = time.monotonic()
    elapsed, err = finish(procs[0], started, "rank 0")
    if "rank 0 of 2" not in err or "lost rank 1 (127.0.0.1)" not in err:
        sys.exit(f"FAIL: rank 0's message does not say what happened "
                 f"(exit {procs[0].returncode}):\n{err}")
    print(f"rank 0: stopped in {elapsed:.1f} s (exit {procs[0].returncode}): "
          f"{err.strip().splitlines()[-1][:60]}...")


if __name__ == "__main__":
    main()
