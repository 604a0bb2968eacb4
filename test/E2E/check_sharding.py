"""Sharded strategies (DOMAIN.md 5) take DDP's steps. For examples/mlp
(AdamW) and the tiny GPT (SGD with momentum), at (W, k) = (2, 1), (2, 2),
(4, 1) and (4, 2) with a global batch of 16, 20 steps under ZERO1, ZERO2
and FULL_SHARD give DDP's parameters and moments within 1e-5 relative
(ZERO1's are DDP's bit for bit). Checkpoints do not depend on the world
size or the strategy: a ZERO1 run at W=4 stopped at step 10 resumes at W=2
under DDP and ZERO2, and at W=1, with the losses and parameters of the
uninterrupted run; so does a FULL_SHARD run at W=4 (whose ranks each wrote
their own pieces), at W=2 under DDP and at W=1; a DDP checkpoint resumes
under ZERO1, and a ZERO2 one under FULL_SHARD.

    python3 check_sharding.py WORKDIR EXAMPLES_DIR
"""
import glob
import os
import re
import shutil
import subprocess
import sys

import numpy as np

from sinter_testing import (TINY_GPT_SETS, npy_feeds, read_safetensors, relative_error, run,
                            write_text)

G, STEPS, TOL = 16, 20, 1e-5
LAYOUTS = [(2, 1), (2, 2), (4, 1), (4, 2)]  # (W, k)



def models(examples, rng):
    """(name, model file, extra config lines, data arrays)."""
    n = G * STEPS
    mlp = {"x": rng.uniform(0, 1, (n, 64)).astype(np.float32),
           "y": rng.integers(0, 10, n).astype(np.int32)}
    gpt = {"idx": rng.integers(0, 256, (n, 32)).astype(np.int32),
           "targets": rng.integers(0, 256, (n, 32)).astype(np.int32)}
    adamw = "optimizer { adamw { lr: 0.001 weight_decay: 0.1 } }\n"
    # SGD for the GPT: AdamW divides by the root of the second moment, which
    # turns float rounding in the key bias's (exactly zero) gradient into
    # full-size steps whenever sums run in another order (ZERO2 sums each
    # micro-batch over the ranks, then over micro-batches).
    sgd = "optimizer { sgd { lr: 0.1 momentum: 0.9 } }\n"
    return [("mlp", os.path.join(examples, "mlp", "mlp.sn"), adamw, mlp),
            ("gpt_tiny", os.path.join(examples, "gpt", "gpt.sn"), TINY_GPT_SETS + sgd, gpt)]


class Runs:
    """Compiles each (strategy, W, b) once and runs it."""

    def __init__(self, base, model, lines, feeds):
        self.base, self.model, self.lines, self.feeds = base, model, lines, feeds
        self.programs = {}

    def config(self, tag, strategy, w, b, steps, resume=False, cap=25):
        cfg = os.path.join(self.base, tag + ".pbtxt")
        world = f" world_size: {w}" if strategy != "DDP" else ""
        write_text(cfg, f'model: "{self.model}"\n{self.lines}'
                   "clip_grad_norm: 1.0\n"
                   f"batch {{ global: {G} micro: {b} }}\n"
                   f"parallel {{ strategy: {strategy}{world} bucket_cap_mb: {cap} }}\n"
                   f"data {{ train {{ {self.feeds}}} shuffle: true }}\n"
                   f"steps: {steps}\nlog {{ every: 1 }}\neval {{ every: 0 }}\n"
                   f'checkpoint {{ dir: "{self.base}/{tag}" resume: {str(resume).lower()} }}\n'
                   "seed: 4\n")
        return cfg

    def run(self, tag, strategy, w, k, steps=STEPS, resume=False, cap=25):
        """Trains; returns ({step: loss} of the log, the last checkpoint)."""
        b = G // (w * k)
        cfg = self.config(tag, strategy, w, b, steps, resume, cap)
        key = (strategy, w if strategy != "DDP" else 0, b, cap)
        if key not in self.programs:
            prog = os.path.join(self.base, "prog_%s_w%d_b%d_cap%g" % key)
            run(["sinterc", "--config", cfg, "-o", prog])
            self.programs[key] = prog
        out = run(["sinter-run", "-n", str(w), self.programs[key], "--config", cfg])
        batches = f"{k} micro-batch{'' if k == 1 else 'es'} of {b}"
        if f"{w} rank" not in out or batches not in out:
            sys.exit(f"FAIL: {tag}: unexpected log:\n{out}")
        losses = {int(m.group(1)): float(m.group(2))
                  for m in re.finditer(r"^step (\d+)/\d+\s+loss (\S+)", out, re.M)}
        return losses, read_safetensors(
            os.path.join(self.base, tag, f"step-{steps}.safetensors"))


def worst(a, b):
    """The largest relative error over the tensors, and the tensor's name."""
    if sorted(a) != sorted(b):
        sys.exit(f"FAIL: the checkpoints hold other tensors: {sorted(a)} vs {sorted(b)}")
    return max((relative_error(a[k], b[k]), k) for k in a)


def check_parity(name, runs, small_buckets):
    errors = {"ZERO1": [], "ZERO2": [], "FULL_SHARD": []}
    for w, k in LAYOUTS:
        _, ddp = runs.run(f"ddp_w{w}k{k}", "DDP", w, k)
        for strategy in errors:
            _, sharded = runs.run(f"{strategy.lower()}_w{w}k{k}", strategy, w, k)
            errors[strategy].append(worst(sharded, ddp))
    # Past the first bucket (1 MiB), buckets of 16 KiB: a GPT of width 128
    # has matrices alone in theirs, whose new slices are gathered straight
    # from the parameters' buffers (views at the rank's offset).
    if small_buckets:
        lines = runs.lines.replace('"dim" value: "64"', '"dim" value: "128"')
        wide = Runs(runs.base, runs.model, lines, runs.feeds)
        _, ddp = wide.run("ddp_small_buckets", "DDP", 2, 2, cap=1 / 64)
        for strategy in errors:
            _, sharded = wide.run(f"{strategy.lower()}_small_buckets", strategy, 2, 2,
                                  cap=1 / 64)
            errors[strategy].append(worst(sharded, ddp))
    extra = ", and width 128 with 16 KiB buckets," if small_buckets else ""
    for strategy, found in errors.items():
        error, tensor = max(found)
        print(f"{name}: {strategy} vs DDP at (W,k) = (2,1) (2,2) (4,1) (4,2){extra} "
              f"after {STEPS} steps, parameters and moments: {error:.1e}")
        if error > TOL:
            sys.exit(f"FAIL: {name}: {strategy} changed the steps ({tensor}: "
                     f"{error:.2e} > {TOL})")


def resume_from(runs, source, tag, strategy, w, k):
    """Copies the step-10 checkpoint of `source` into a fresh folder and
    resumes there to step 20."""
    dst = os.path.join(runs.base, tag)
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for f in glob.glob(os.path.join(runs.base, source, "step-10.*")):
        shutil.copy(f, dst)
    return runs.run(tag, strategy, w, k, resume=True)


def resumed_errors(runs, source, whole_losses, whole, targets):
    """Resumes `source`'s step-10 checkpoint as each (tag, strategy, W, k);
    the worst distances to the uninterrupted run, in losses and tensors."""
    errors = []
    for tag, strategy, w, k in targets:
        losses, final = resume_from(runs, source, tag, strategy, w, k)
        if sorted(losses) != list(range(11, 21)):
            sys.exit(f"FAIL: {tag}: resumed at the wrong step: {sorted(losses)}")
        errors.append(max((abs(losses[s] - whole_losses[s]) / abs(whole_losses[s]),
                           f"{tag} loss of step {s}") for s in losses))
        errors.append(worst(final, whole))
    return errors


def check_resume(name, runs):
    # Micro-batches of 4 throughout: the layouts differ only in where the
    # sums over micro-batches and ranks happen.
    whole_losses, whole = runs.run("zero1_w4_whole", "ZERO1", 4, 1)
    runs.run("zero1_w4_half", "ZERO1", 4, 1, steps=10)
    errors = resumed_errors(runs, "zero1_w4_half", whole_losses, whole,
                            [("ddp_w2_resumed", "DDP", 2, 2),
                             ("ddp_w1_resumed", "DDP", 1, 4),
                             ("zero2_w2_resumed", "ZERO2", 2, 2)])
    # At the same layout, DDP resumes ZERO1's checkpoint bit for bit.
    losses, final = resume_from(runs, "zero1_w4_half", "ddp_w4_resumed", "DDP", 4, 1)
    if any(losses[s] != whole_losses[s] for s in losses) or worst(final, whole)[0] != 0:
        sys.exit(f"FAIL: {name}: DDP at W=4 resumed ZERO1's checkpoint with other steps")
    # And back: a DDP checkpoint of one rank resumes as ZERO1 over two.
    runs.run("ddp_w1_half", "DDP", 1, 4, steps=10)
    _, final = resume_from(runs, "ddp_w1_half", "zero1_w2_resumed", "ZERO1", 2, 2)
    errors.append(worst(final, whole))
    error, what = max(errors)
    print(f"{name}: ZERO1 W=4 saved at step 10 resumes bit for bit as DDP W=4, and at "
          f"W=2 DDP, W=1 and W=2 ZERO2; DDP W=1 resumes as ZERO1 W=2: losses and tensors "
          f"within {error:.1e}")
    if error > TOL:
        sys.exit(f"FAIL: {name}: a resume across world sizes changed the run "
                 f"({what}: {error:.2e} > {TOL})")
    # FULL_SHARD: each rank wrote its own piece, which no other rank held.
    whole_losses, whole = runs.run("full_w4_whole", "FULL_SHARD", 4, 1)
    runs.run("full_w4_half", "FULL_SHARD", 4, 1, steps=10)
    pieces = sorted(os.path.basename(p) for p in
                    glob.glob(os.path.join(runs.base, "full_w4_half", "step-10.*")))
    if len(pieces) != 5:
        sys.exit(f"FAIL: a FULL_SHARD checkpoint of 4 ranks is not 4 pieces and a file: "
                 f"{pieces}")
    errors = resumed_errors(runs, "full_w4_half", whole_losses, whole,
                            [("full_ddp_w2_resumed", "DDP", 2, 2),
                             ("full_ddp_w1_resumed", "DDP", 1, 4)])
    runs.run("zero2_w2_half", "ZERO2", 2, 2, steps=10)
    errors += resumed_errors(runs, "zero2_w2_half", whole_losses, whole,
                             [("full_w2_resumed", "FULL_SHARD", 2, 2)])
    error, what = max(errors)
    print(f"{name}: FULL_SHARD W=4 saved at step 10 in {' '.join(pieces)} resumes at "
          f"W=2 DDP and W=1; ZERO2 W=2 resumes as FULL_SHARD W=2: losses and tensors "
          f"within {error:.1e}")
    if error > TOL:
        sys.exit(f"FAIL: {name}: a FULL_SHARD resume changed the run "
                 f"({what}: {error:.2e} > {TOL})")


def check_wrong_world(runs):
    """A ZERO1 program compiled for 2 ranks refuses to run on another number
    (and so does a DDP program given parallel.world_size),
    a run-time config may not change the strategy it was compiled with, and
    --gradients (whole gradients) refuses a sharded program."""
    prog = runs.programs[("ZERO1", 2, 8, 25)]
    alone = subprocess.run([prog, "--config", os.path.join(runs.base, "zero1_w2k1.pbtxt")],
                           capture_output=True, text=True)
    if alone.returncode == 0 or "compiled for 2 ranks" not in alone.stderr:
        sys.exit(f"FAIL: a ZERO1 program for 2 ranks ran alone: {alone.stderr}")
    changed = subprocess.run(["sinter-run", "-n", "2", prog, "--config",
                              os.path.join(runs.base, "zero1_w2k1.pbtxt"),
                              "--set", "parallel.strategy=DDP"],
                             capture_output=True, text=True)
    if changed.returncode == 0 or "parallel.strategy" not in changed.stderr:
        sys.exit(f"FAIL: a run-time config changed the compiled strategy: {changed.stderr}")
    grads = subprocess.run(["sinter-run", "-n", "2", prog, "--config",
                            os.path.join(runs.base, "zero1_w2k1.pbtxt"), "--gradients",
                            os.path.join(runs.base, "gradients")],
                           capture_output=True, text=True)
    if grads.returncode == 0 or "recompile it with strategy: DDP" not in grads.stderr:
        sys.exit(f"FAIL: --gradients ran on a sharded program: {grads.stderr}")
    # parallel.world_size binds a DDP program too.
    cfg = os.path.join(runs.base, "ddp_w2k1.pbtxt")
    ddp2 = os.path.join(runs.base, "prog_ddp_world2")
    run(["sinterc", "--config", cfg, "--set", "parallel.world_size=2", "-o", ddp2])
    ddp_alone = subprocess.run([ddp2, "--config", cfg, "--set", "parallel.world_size=2"],
                               capture_output=True, text=True)
    if ddp_alone.returncode == 0 or "compiled for 2 ranks" not in ddp_alone.stderr:
        sys.exit(f"FAIL: a DDP program for 2 ranks ran alone: {ddp_alone.stderr}")
    misplaced = subprocess.run(["sinterc", "--config", cfg, "--world", "2", "-o", ddp2],
                               capture_output=True, text=True)
    if misplaced.returncode == 0 or "go with --report-memory" not in misplaced.stderr:
        sys.exit(f"FAIL: sinterc took --world without --report-memory: {misplaced.stderr}")
    print("wrong world: " + alone.stderr.strip().splitlines()[-1])


def main():
    work, examples = sys.argv[1], os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(13)
    for name, model, lines, data in models(examples, rng):
        base = os.path.join(work, name)
        feeds = npy_feeds(base, data)
        runs = Runs(base, model, lines, feeds)
        check_parity(name, runs, small_buckets=name == "gpt_tiny")
        if name == "mlp":
            check_resume(name, runs)
            check_wrong_world(runs)
    print("sharding: ZERO1, ZERO2 and FULL_SHARD take DDP's steps; checkpoints "
          "outlive the world size")


if __name__ == "__main__":
    main()
