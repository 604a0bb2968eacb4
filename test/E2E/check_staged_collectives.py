"""Collectives staged through host buffers (parallel.collectives GLOO on a
GPU, where a rank's buckets and shards travel through pinned host memory)
compute what the direct Gloo path computes, bit for bit. Run here on CPU
programs with SINTER_STAGED_COLLECTIVES=1, which stages them through host
buffers and a copy thread the same way: for examples/mlp (AdamW) and the
tiny GPT (SGD with momentum, 16 KiB buckets: several per step), DDP, ZERO1,
ZERO2 and FULL_SHARD at W = 2 and 3, with k = 1 and 2 micro-batches, train
5 steps to checkpoints (each rank's shards included) that equal the direct
runs' byte for byte, with the same logged losses; each run's first lines
say the strategy, what it shards, the engine and the plan's memory, and
its last the collectives of each kind per step.

    python3 check_staged_collectives.py WORKDIR EXAMPLES_DIR
"""
import filecmp
import glob
import os
import re
import sys

import numpy as np

from sinter_testing import TINY_GPT_SETS, npy_feeds, run, write_text

G, STEPS = 12, 5
LAYOUTS = [(2, 1), (3, 2)]  # (W, k)
STRATEGIES = ["DDP", "ZERO1", "ZERO2", "FULL_SHARD"]



SHARDED = {"DDP": None, "ZERO1": "optimizer state",
           "ZERO2": "gradients and optimizer state",
           "FULL_SHARD": "parameters, gradients and optimizer state"}
# What each strategy's communication line counts per step (with
# clip_grad_norm, an all-reduce of the norm's partial sums besides).
KINDS = {"DDP": {"all-reduces"}, "ZERO1": {"all-reduces", "all-gathers"},
         "ZERO2": {"all-reduces", "reduce-scatters", "all-gathers"},
         "FULL_SHARD": {"all-reduces", "reduce-scatters", "all-gathers"}}


def says_what_it_does(tag, strategy, w, out):
    """The run's first lines name the strategy, what it shards over how
    many ranks and the engine, and the plan's memory per rank; its last,
    the collectives of each kind per step."""
    what = SHARDED[strategy]
    first = (f"{strategy} on {w} ranks: " +
             (f"{what} sharded over {w} ranks" if what else "a full replica on each") +
             "; collectives: Gloo over TCP, through host buffers (SINTER_STAGED_COLLECTIVES)")
    comm = next((l for l in out.splitlines() if l.startswith("communication:")), "")
    counts = re.findall(r"([0-9.]+) (all-reduces|reduce-scatters|all-gathers)", comm)
    if first not in out or "memory per rank, from the plan: " not in out or \
            {k for _, k in counts} != KINDS[strategy] or \
            any(float(n) <= 0 for n, _ in counts):
        sys.exit(f"FAIL: {tag}: the run does not say what it does:\n{out}")
    kinds = comm.index("; per step ") + 2
    return comm[kinds:comm.index(", the first", kinds)]


def losses(out):
    return re.findall(r"^step \d+/\d+\s+loss (\S+)", out, re.M)


def main():
    work, examples = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    n = G * STEPS
    mlp = {"x": rng.uniform(0, 1, (n, 64)).astype(np.float32),
           "y": rng.integers(0, 10, n).astype(np.int32)}
    gpt = {"idx": rng.integers(0, 256, (n, 32)).astype(np.int32),
           "targets": rng.integers(0, 256, (n, 32)).astype(np.int32)}
    models = [("mlp", os.path.join(examples, "mlp", "mlp.sn"),
               "optimizer { adamw { lr: 0.001 weight_decay: 0.1 } }\n", mlp, 25),
              ("gpt_tiny", os.path.join(examples, "gpt", "gpt.sn"),
               TINY_GPT_SETS + "optimizer { sgd { lr: 0.1 momentum: 0.9 } }\n", gpt, 1 / 64)]
    staged_env = dict(os.environ, SINTER_STAGED_COLLECTIVES="1")
    for name, model, lines, arrays, cap in models:
        feeds = npy_feeds(os.path.join(work, name + "_data"), arrays)
        for strategy in STRATEGIES:
            for w, k in LAYOUTS:
                b = G // (w * k)
                tag = f"{name}_{strategy}_w{w}k{k}"
                base = os.path.join(work, tag)
                os.makedirs(base, exist_ok=True)
                world = f" world_size: {w}" if strategy != "DDP" else ""
                cfg = os.path.join(base, "train.pbtxt")
                write_text(cfg, f'model: "{model}"\n{lines}clip_grad_norm: 1.0\n'
                           f"batch {{ global: {G} micro: {b} }}\n"
                           f"parallel {{ strategy: {strategy}{world} bucket_cap_mb: {cap} }}\n"
                           f"data {{ train {{ {feeds}}} shuffle: true }}\n"
                           f"steps: {STEPS}\nlog {{ every: 1 }}\n")
                prog = os.path.join(base, "prog")
                run(["sinterc", "--config", cfg, "-o", prog])
                outs = {}
                for path, env in (("direct", None), ("staged", staged_env)):
                    outs[path] = run(["sinter-run", "-n", str(w), prog, "--set",
                                      f"checkpoint.dir={base}/{path}"], env=env)
                said = says_what_it_does(tag, strategy, w, outs["staged"])
                if losses(outs["direct"]) != losses(outs["staged"]) or not losses(outs["direct"]):
                    sys.exit(f"FAIL: {tag}: the logged losses differ:\n{outs['direct']}\n"
                             f"{outs['staged']}")
                files = sorted(os.path.basename(f) for f in
                               glob.glob(os.path.join(base, "direct", f"step-{STEPS}*")))
                staged = sorted(os.path.basename(f) for f in
                                glob.glob(os.path.join(base, "staged", f"step-{STEPS}*")))
                if not files or files != staged:
                    sys.exit(f"FAIL: {tag}: checkpoints {files} vs {staged}")
                for f in files:
                    if not filecmp.cmp(os.path.join(base, "direct", f),
                                       os.path.join(base, "staged", f), shallow=False):
                        sys.exit(f"FAIL: {tag}: {f} differs between the direct and "
                                 "staged runs")
            print(f"{name}: {strategy} staged equals direct at (W,k) = (2,1) (3,2), "
                  f"{STEPS} steps: checkpoints byte for byte; the run says so, and {said}")
    print("staged collectives: every strategy computes the direct path's steps")


if __name__ == "__main__":
    main()
