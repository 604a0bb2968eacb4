"""PyTorch's tokens/s and peak memory for GPT-2 124M training steps on the
GPU, for the table of scripts/gpu-check.sh: the same model
(bench/models_torch.py), the same batch, AdamW, eager and torch.compile, in
f32 (TF32 off, as Sinter's f32) and with bf16 autocast.

    python3 torch_gpt2.py MICRO_BATCH [STEPS] [f32|bf16]

With f32 or bf16, only that precision's two rows. Each row is
NAME<tab>TOKENS_PER_S<tab>PEAK_MIB, the peak being
torch.cuda.max_memory_allocated over that row's steps (model, optimizer
state and activations; not CUDA's context or the allocator's cache).
"""
import statistics
import sys
import time

import torch

from models_torch import GPT

T = 1024


def tokens_per_second(micro, steps, compiled, bf16):
    """(tokens/s, peak MiB allocated) of `steps` steps."""
    torch.manual_seed(0)
    torch.cuda.reset_peak_memory_stats()
    model = GPT(50257, T, 768, 12, 12).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, weight_decay=0.1)
    step_fn = torch.compile(model) if compiled else model
    idx = torch.randint(0, 50257, (micro, T), device="cuda")
    targets = torch.randint(0, 50257, (micro, T), device="cuda")
    times = []
    for i in range(steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            loss = step_fn(idx, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if i >= 3:  # warm-up: compilation, autotuning, allocation
            times.append(time.perf_counter() - start)
    return micro * T / statistics.median(times), torch.cuda.max_memory_allocated() / 2**20


def main():
    micro = int(sys.argv[1])
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    precisions = {"f32": (False,), "bf16": (True,)}.get(
        sys.argv[3] if len(sys.argv) > 3 else "", (False, True))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    for compiled in (False, True):
        for bf16 in precisions:
            name = ("torch.compile" if compiled else "PyTorch eager") + (
                " bf16" if bf16 else " f32")
            try:
                tps, peak = tokens_per_second(micro, steps, compiled, bf16)
                print(f"{name}\t{tps:.0f}\t{peak:.0f}")
            except Exception as e:  # noqa: BLE001 - a row of the table says why
                print(f"{name}\tfailed: {type(e).__name__}: {str(e)[:120]}")
            sys.stdout.flush()
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
