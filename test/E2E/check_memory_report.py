"""The memory report (sinterc --report-memory) is the compiled plan, and the
plan is what a run holds (DOMAIN.md 5).

- For the tiny GPT and GPT-2 124M (T=128, micro-batch 1) at W=2, each
  strategy's reported total is the plans' buffers the program logs; on
  GPT-2 124M every rank's measured resident growth, less the mapped files
  (code as it first runs), is within 5% of it (on the tiny GPT, whose plan
  is 4 MiB, the runtime's own heap is most of the rest: 1.5 MiB on an
  AVX-512 machine, 2.9 MiB on an AVX2 one, where oneDNN's kernels and
  threads take more, so there it is within 4 MiB).
- The model state per rank follows DOMAIN.md 5 (f32): 16Ψ for DDP, 8Ψ + 8Ψ/W
  for ZERO1, 4Ψ + 12Ψ/W for ZERO2, 16Ψ/W for FULL_SHARD, up to padding and
  64-byte alignment.
- GPT-2 XL (1.5B parameters, micro-batch 1, T=1024) does not fit a 24 GiB
  device under DDP, and does under FULL_SHARD at W=2.

    python3 check_memory_report.py WORKDIR EXAMPLES_DIR
"""
import os
import re
import sys

from sinter_testing import run

W = 2
STRATEGIES = ["DDP", "ZERO1", "ZERO2", "FULL_SHARD"]
# DOMAIN.md 5, f32 with AdamW: model-state bytes per rank.
MODEL_STATE = {"DDP": lambda p: 16 * p, "ZERO1": lambda p: 8 * p + 8 * p / W,
               "ZERO2": lambda p: 4 * p + 12 * p / W, "FULL_SHARD": lambda p: 16 * p / W}
TINY = ('set { key: "vocab" value: "256" } set { key: "ctx" value: "64" } '
        'set { key: "dim" value: "64" } set { key: "heads" value: "4" } '
        'set { key: "layers" value: "2" }\nshapes { key: "T" value: 32 }\n'
        "batch { global: 16 micro: 4 }\n")
GPT2 = 'shapes { key: "T" value: 128 }\nbatch { global: 2 micro: 1 }\n'
XL = ('set { key: "layers" value: "48" } set { key: "dim" value: "1600" } '
      'set { key: "heads" value: "25" }\nshapes { key: "T" value: 1024 }\n'
      "batch { global: 2 micro: 1 }\n")


def config(work, name, examples, lines):
    path = os.path.join(work, name + ".pbtxt")
    with open(path, "w") as f:
        f.write(f'model: "{examples}/gpt/gpt.sn"\n{lines}'
                "optimizer { adamw { lr: 1e-4 weight_decay: 0.1 } }\n"
                "data { train { synthetic { } } }\nsteps: 1\nlog { every: 1 }\n")
    return path


def report(cfg, *extra):
    """{row: {strategy: cell}} of the report's table, and its Ψ."""
    out = run(["sinterc", "--config", cfg, "--report-memory", "--world", str(W), *extra])
    lines = out.splitlines()
    header = next(i for i, l in enumerate(lines) if l.split()[:1] == ["DDP"])
    names = lines[header].split()
    table = {}
    for line in lines[header + 1:]:
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) == len(names) + 1:
            table[cells[0]] = dict(zip(names, cells[1:]))
    psi = int(re.search(r"Ψ = (\d+) parameters", out).group(1))
    return table, psi, out


def mib(cell):
    return float(cell.split()[0])


def measured(cfg, prog, strategy):
    """Each rank's (MiB above its start less mapped files, the plans' MiB)
    from the run's log."""
    run(["sinterc", "--config", cfg, "--set", f"parallel.strategy={strategy}",
         "--set", f"parallel.world_size={W}", "-o", prog])
    out = run(["sinter-run", "-n", str(W), prog])
    found = re.findall(r"memory, rank (\d+): peak [0-9.]+ MiB resident, ([0-9.]+) MiB "
                       r"above its start, ([0-9.]+) MiB of it mapped files \(code, data\); "
                       r"the plans' buffers ([0-9.]+) MiB", out)
    if len(found) != W:
        sys.exit(f"FAIL: {prog}: no memory line per rank:\n{out}")
    return [(round(float(above) - float(files), 1), float(planned))
            for _, above, files, planned in found]


def check(work, examples, name, lines, relative, absolute):
    cfg = config(work, name, examples, lines)
    table, psi, text = report(cfg)
    rows = []
    for strategy in STRATEGIES:
        total = mib(table["total"][strategy])
        state = mib(table["model state"][strategy]) * 2**20
        want = MODEL_STATE[strategy](psi)
        if abs(state - want) > 1e-3 * want + 2**20 * 0.1:
            sys.exit(f"FAIL: {name} {strategy}: model state {state:.0f} bytes, "
                     f"DOMAIN.md 5 says {want:.0f}\n{text}")
        for rank, (above, planned) in enumerate(
                measured(cfg, os.path.join(work, f"{name}_{strategy}"), strategy)):
            if abs(planned - total) > 0.05:
                sys.exit(f"FAIL: {name} {strategy}: the program's plan ({planned} MiB) "
                         f"is not the report's ({total} MiB)")
            if abs(above - total) > max(relative * total, absolute):
                sys.exit(f"FAIL: {name} {strategy} rank {rank}: measured {above} MiB, "
                         f"reported {total} MiB")
            rows.append(f"{strategy} rank {rank}: reported {total} MiB, measured {above} MiB")
    print(f"{name}: W={W}, " + "; ".join(rows))
    # What each strategy shards is 1/W of DDP's.
    for row, sharded in [("optimizer state", STRATEGIES[1:]),
                         ("gradients", ["ZERO2", "FULL_SHARD"]),
                         ("parameters and states", ["FULL_SHARD"])]:
        ddp = mib(table[row]["DDP"])
        for s in sharded:
            if abs(mib(table[row][s]) - ddp / W) > 0.1:
                sys.exit(f"FAIL: {name}: {s}'s {row} is not 1/W of DDP's\n{text}")


def main():
    work, examples = sys.argv[1], os.path.abspath(sys.argv[2])
    os.makedirs(work, exist_ok=True)
    check(work, examples, "gpt_tiny", TINY, relative=0.05, absolute=4.0)
    check(work, examples, "gpt2_124m", GPT2, relative=0.05, absolute=0.0)
    print("model state: DDP 16Ψ, ZERO1 8Ψ + 8Ψ/W, ZERO2 4Ψ + 12Ψ/W and FULL_SHARD 16Ψ/W, "
          "as DOMAIN.md 5 says")
    table, _, text = report(config(work, "gpt2_xl", examples, XL),
                            "--device-memory", "24GiB")
    fits = table["fits in 24GiB"]
    if fits["DDP"] != "no" or fits["FULL_SHARD"] != "yes":
        sys.exit(f"FAIL: GPT-2 XL on 24 GiB: DDP fits, or FULL_SHARD does not?\n{text}")
    print(f"GPT-2 XL on 24 GiB devices at W={W}: " + ", ".join(
        f"{s} {fits[s]} ({table['total'][s]})" for s in STRATEGIES))
    # The report names the strategy that fits: the first of the table's
    # order that does (the least communication).
    first = next(s for s in STRATEGIES if fits[s] == "yes")
    named = re.search(r"^with 24GiB per rank: (\S+) fits", text, re.M)
    if not named or named.group(1) != first:
        sys.exit(f"FAIL: GPT-2 XL on 24 GiB: the report does not name {first}\n{text}")
    print(f"the report names {first}, the first strategy that fits")
    # On CUDA the numbers are each rank's GPU's, and the report names what
    # the GPU holds beside the plan; a model that fits nowhere says so.
    cuda = run(["sinterc", "--config", config(work, "gpt2_xl", examples, XL), "--set",
                "device=CUDA", "--report-memory", "--world", "1", "--device-memory", "8GiB"])
    if "on each rank's GPU" not in cuda or "CUDA's context" not in cuda or \
            not re.search(r"^with 8GiB per rank: no strategy fits; the smallest, \S+, needs",
                          cuda, re.M):
        sys.exit(f"FAIL: GPT-2 XL on CUDA, 8 GiB:\n{cuda}")
    print("CUDA: the report is per GPU, names what the GPU holds beside the plan, and says "
          "when nothing fits")


if __name__ == "__main__":
    main()
