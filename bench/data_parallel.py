"""Data-parallel training benchmark: the step time of a GPT of width 256
(2 layers, 4 heads, 32 tokens, vocabulary 256; 1.7M parameters) with a
global batch of 16 in micro-batches of 8, on 1 and 2 ranks of this machine:
Sinter (sinter-run, Gloo, gradient buckets) against PyTorch DDP (Gloo), same
model, same batches, same thread count per rank, measured in one run. Also
Sinter's communication time per step from its own log.

    scripts/bench.sh data-parallel

Prints milliseconds per optimizer step and the ratios sinter/torch: below 1
means Sinter is faster; and Sinter on 2 ranks compiled with parallel {
overlap: false }, which starts every gradient sum after the backward pass,
to show what the overlap gains.
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.path.join(ROOT, "build", "bin")
CORES = os.cpu_count()
VOCAB, CTX, DIM, HEADS, LAYERS, T = 256, 32, 256, 4, 2, 32
GLOBAL, MICRO = 16, 8
WARMUP, STEPS = 3, 20

CONFIG = f"""model: "{ROOT}/examples/gpt/gpt.sn"
set {{ key: "vocab" value: "{VOCAB}" }} set {{ key: "ctx" value: "{CTX}" }}
set {{ key: "dim" value: "{DIM}" }} set {{ key: "heads" value: "{HEADS}" }}
set {{ key: "layers" value: "{LAYERS}" }} shapes {{ key: "T" value: {T} }}
batch {{ global: {GLOBAL} micro: {MICRO} }}
optimizer {{ sgd {{ lr: 0.01 }} }}
data {{ train {{ synthetic {{ }} }} }}
log {{ every: 1000 }}
"""
COMM = re.compile(r"communication: ([0-9.]+) ms per step .* (?:the first gradient sum started "
                  r"([0-9.]+) ms before the end of backward|all started after backward "
                  r"\(parallel.overlap false\)); ([0-9.]+) ms waited")


def sinter_ms(prog, ranks):
    """ms per step: the time of STEPS+WARMUP steps minus WARMUP steps."""
    def run(steps):
        cmd = [os.path.join(BIN, "sinter-run"), "-n", str(ranks), prog,
               "--set", f"steps={steps}"]
        start = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        return time.perf_counter() - start, out
    short, _ = run(WARMUP)
    full, out = run(WARMUP + STEPS)
    comm = COMM.search(out)
    return 1e3 * (full - short) / STEPS, comm


def torch_rank(rank, ranks, port, result):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    sys.path.insert(0, HERE)
    import models_torch
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(max(1, CORES // ranks))
    dist.init_process_group("gloo", rank=rank, world_size=ranks)
    torch.manual_seed(0)
    model = DDP(models_torch.GPT(VOCAB, CTX, DIM, HEADS, LAYERS))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    k = GLOBAL // (MICRO * ranks)
    gen = torch.Generator().manual_seed(rank)
    batches = [(torch.randint(0, VOCAB, (MICRO, T), generator=gen),
                torch.randint(0, VOCAB, (MICRO, T), generator=gen)) for _ in range(k)]

    def step():
        opt.zero_grad()
        for m, (idx, tgt) in enumerate(batches):
            if m < k - 1:
                with model.no_sync():
                    (model(idx, tgt) / k).backward()
            else:
                (model(idx, tgt) / k).backward()
        opt.step()
    for _ in range(WARMUP):
        step()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(STEPS):
        step()
    dist.barrier()
    if rank == 0:
        result.put(1e3 * (time.perf_counter() - start) / STEPS)
    dist.destroy_process_group()


def torch_ms(ranks):
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    result = ctx.Queue()
    mp.start_processes(torch_rank, args=(ranks, port, result), nprocs=ranks,
                       join=True, start_method="spawn")
    return result.get()


def main():
    work = tempfile.mkdtemp(prefix="sinter-bench-dp-")
    cfg = os.path.join(work, "gpt.pbtxt")
    with open(cfg, "w") as f:
        f.write(CONFIG)
    prog = os.path.join(work, "gpt")
    subprocess.run([os.path.join(BIN, "sinterc"), "--config", cfg, "-o", prog],
                   check=True)
    print(f"GPT width {DIM}, {LAYERS} layers, {T} tokens; global batch {GLOBAL}, "
          f"micro-batch {MICRO}; {CORES} cores shared by the ranks; ms per step")
    print(f"{'ranks':>5} {'sinter':>9} {'torch DDP':>10} {'sinter/torch':>13}   "
          "sinter communication per step")
    for ranks in (1, 2):
        s, comm = sinter_ms(prog, ranks)
        t = torch_ms(ranks)
        note = ""
        if comm:
            note = (f"{comm.group(1)} ms, started {comm.group(2)} ms before the end "
                    f"of backward, {comm.group(3)} ms waited")
        print(f"{ranks:>5} {s:>9.2f} {t:>10.2f} {s / t:>13.2f}   {note}")
        if ranks == 2:
            with_overlap, torch_two = s, t
    serial = os.path.join(work, "gpt_no_overlap")
    subprocess.run([os.path.join(BIN, "sinterc"), "--config", cfg, "--set",
                    "parallel.overlap=false", "-o", serial], check=True)
    s, comm = sinter_ms(serial, 2)
    note = f"{comm.group(1)} ms, {comm.group(3)} ms waited" if comm else ""
    print(f"{'2, no overlap':>5} {s:>9.2f} {torch_two:>10.2f} {s / torch_two:>13.2f}   "
          f"{note}; the overlap saves {s - with_overlap:.2f} ms a step")


if __name__ == "__main__":
    main()
