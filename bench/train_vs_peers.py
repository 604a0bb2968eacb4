"""The benchmark suite: whole training steps (forward, backward, optimizer)
of Sinter against PyTorch eager, torch.compile and JAX jit, with the same
shapes, dtype (f32), optimizer and thread count, measured in one run:

- mlp: 784-1024-1024-10, batch 256, SGD with momentum;
- resnet18: CIFAR ResNet-18, batch 32, SGD with momentum and weight decay;
- resnet18-224: ImageNet's ResNet-18 (224x224 images, torchvision's stem,
  1000 classes), batch 32, the same optimizer;
- cnn: three conv-ReLU-max-pool stages (64, 128, 256 channels) and a
  classifier on CIFAR images, batch 64, SGD with momentum;
- mobilenet: a 3x3 stem and five depthwise-separable blocks (32 to 256
  channels, batch norm) on CIFAR images, batch 64, SGD with momentum;
- gpt: 4 layers of width 256, 4 heads, GPT-2's vocabulary, T=128, batch 8,
  AdamW;
- gpt2: GPT-2 124M (12 layers of width 768), T=128, batch 1, AdamW;
- gpt2-1024: the same at its full context, T=1024, batch 2 (about 10 s a
  step here: not in the default set, ask for it with --models);
- gpt-bf16, gpt2-bf16: the same with bf16 matmul inputs and f32 sums
  (Sinter's precision { compute: BF16 }, PyTorch's CPU autocast to bf16,
  JAX's matmuls of bf16 arrays into f32); their GEMM share is of the f32
  peak.
- resnet18-winograd, cnn-winograd: Sinter's step with precision {
  convolution: WINOGRAD } (oneDNN's Winograd kernels for the 3x3 stride-1
  convolutions: fewer multiplications, 2-4x JAX's float32 rounding error,
  bench/winograd_error.py) against the peers' usual steps (none of them
  offers Winograd on the CPU; their times are the base model's, measured
  once per run); the GEMM share counts the direct convolutions' FLOPs.

    scripts/bench.sh [STEPS] [--models mlp,gpt]   (sets up .venv-bench, builds,
                                                   runs this; all models by default)

Per model it prints the median milliseconds per step and Sinter's ratio to
each peer (below 1: Sinter is faster), the compile time (sinterc; the first
step of torch.compile and of jax.jit), each one's peak resident memory, and
the share of the machine's f32 GEMM peak (measured here first) that each
step's matmul and convolution FLOPs reach. Timings are never asserted; on 2
cores one busy core skews every figure, so the suite checks the load first
and says so in its header when the machine is not idle.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sinter_build import ROOT, sinterc_of, take_build_dir, take_models  # noqa: E402
from peer_step import BATCH, GPTS, IMAGES, MOBILENET_BLOCKS  # noqa: E402

THREADS = os.cpu_count()
PEERS = ["torch", "compile", "jax"]
# (name, Sinter config, the step's matmul and convolution FLOPs).


def mlp_flops(b=256):
    return 3 * 2 * b * (784 * 1024 + 1024 * 1024 + 1024 * 10)


def resnet18_flops(b=32, image=32, classes=10):
    if image > 32:  # a 7x7 stride-2 stem, then a stride-2 max-pool
        forward, size = 2 * (image // 2) ** 2 * 3 * 64 * 49, image // 4
    else:
        forward, size = 2 * image * image * 3 * 64 * 9, image
    cin = 64
    for stage, cout in enumerate([64, 128, 256, 512]):
        for i in range(2):
            stride = 2 if stage and i == 0 else 1
            size //= stride
            forward += 2 * size * size * cout * (cin * 9 + cout * 9)
            if stride != 1 or cin != cout:
                forward += 2 * size * size * cout * cin
            cin = cout
    forward += 2 * 512 * classes
    return 3 * b * forward


def cnn_flops(b=64):
    forward, size, cin = 0, 32, 3
    for cout in [64, 128, 256]:
        forward += 2 * size * size * cout * cin * 9
        size //= 2
        cin = cout
    forward += 2 * 4096 * 10
    return 3 * b * forward


def mobilenet_flops(b=64):
    size = 32
    forward = 2 * size * size * 3 * 32 * 9
    for cin, cout, stride in MOBILENET_BLOCKS:
        size //= stride
        forward += 2 * size * size * cin * (9 + cout)  # depthwise, then pointwise
    forward += 2 * 256 * 10
    return 3 * b * forward


def gpt_flops(b=8, t=128, d=256, layers=4, vocab=50257):
    per_layer = 2 * t * (d * 3 * d + d * d + 2 * d * 4 * d) + 2 * 2 * t * t * d
    return 3 * b * (layers * per_layer + 2 * t * d * vocab)


MODELS = [("mlp", "bench/models/mlp784.pbtxt", mlp_flops()),
          ("resnet18", "bench/models/resnet18_b32.pbtxt", resnet18_flops()),
          ("resnet18-224", "bench/models/resnet18_224_b32.pbtxt",
           resnet18_flops(image=224, classes=1000)),
          ("cnn", "bench/models/cnn_b64.pbtxt", cnn_flops()),
          ("mobilenet", "bench/models/mobilenet_b64.pbtxt", mobilenet_flops()),
          ("gpt", "bench/models/gpt4x256.pbtxt", gpt_flops()),
          ("gpt2", "bench/models/gpt2_124m.pbtxt",
           gpt_flops(b=1, d=768, layers=12)),
          ("gpt-bf16", "bench/models/gpt4x256.pbtxt", gpt_flops()),
          ("gpt2-1024", "bench/models/gpt2_124m_t1024.pbtxt",
           gpt_flops(b=2, t=1024, d=768, layers=12)),
          ("gpt2-bf16", "bench/models/gpt2_124m.pbtxt",
           gpt_flops(b=1, d=768, layers=12)),
          ("resnet18-winograd", "bench/models/resnet18_b32.pbtxt", resnet18_flops()),
          ("cnn-winograd", "bench/models/cnn_b64.pbtxt", cnn_flops())]
SLOW = ["gpt2-1024"]  # run only when named
BF16 = "-bf16"  # a model name's suffix: bf16 matmul inputs
WINOGRAD = "-winograd"  # Sinter's Winograd convolutions; the peers' usual ones


def base_model(name):
    """The model a suite name runs: without its -bf16 or -winograd."""
    return name.removesuffix(BF16).removesuffix(WINOGRAD)
MEMORY = re.compile(r"memory, rank 0: peak ([0-9.]+) MiB resident")
# A step's log line ends with its own time: "556 ms/step" or "1.05 s/step".
STEP_TIME = re.compile(r"^step \d+/\d+ .* ([0-9.]+) (m?s)/step$", re.MULTILINE)


def busy_share(seconds=2.0):
    """The share of the machine's CPU time that was busy over `seconds`
    (/proc/stat), while this process sleeps."""
    def sample():
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
        return sum(fields), fields[3] + fields[4]  # all, idle + iowait
    total0, idle0 = sample()
    time.sleep(seconds)
    total1, idle1 = sample()
    return 1 - (idle1 - idle0) / max(total1 - total0, 1)


def wait_until_idle(limit=60.0):
    """The busy share once it is under 5%, or after `limit` seconds."""
    start = time.perf_counter()
    while True:
        busy = busy_share()
        if busy < 0.05 or time.perf_counter() - start > limit:
            return busy


GEMM_N = 2048

JAX_GEMM = f"""
import time, jax, jax.numpy as jnp
n = {GEMM_N}
a = jax.random.normal(jax.random.key(0), (n, n), jnp.float32)
f = jax.jit(lambda a, b: a @ b)
f(a, a).block_until_ready()
best = 0.0
for _ in range(5):
    start = time.perf_counter()
    f(a, a).block_until_ready()
    best = max(best, 2 * n ** 3 / (time.perf_counter() - start) / 1e9)
print(best)
"""


def gemm_peak_gflops():
    """The best f32 GEMM rate here, {library: GFLOP/s}: 2048^3 through
    PyTorch and through JAX (in its own process, to set its threads), on
    THREADS threads, best of five each. A library's GEMM may fall short of
    the machine on a CPU it was not tuned for, so the peak is the better."""
    import torch
    torch.set_num_threads(THREADS)
    n = GEMM_N
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = 0.0
    for _ in range(5):
        start = time.perf_counter()
        a @ b
        best = max(best, 2 * n ** 3 / (time.perf_counter() - start) / 1e9)
    rates = {"PyTorch": best}
    env = dict(os.environ, XLA_FLAGS="--xla_cpu_multi_thread_eigen=true "
               f"intra_op_parallelism_threads={THREADS}")
    jax_run = subprocess.run([sys.executable, "-c", JAX_GEMM], capture_output=True,
                             text=True, env=env)
    if jax_run.returncode == 0:
        rates["JAX"] = float(jax_run.stdout.split()[-1])
    return rates


def data_setting(name, steps, out_dir):
    """A `data.train` of random samples in files, as the peers hold theirs in
    memory: enough for 1 + steps steps, read without shuffling."""
    import numpy as np
    rng = np.random.default_rng(0)
    n = BATCH[name] * (steps + 2)
    if name.startswith("gpt"):
        path = os.path.join(out_dir, f"{name}_tokens.bin")
        rng.integers(0, 50257, n * GPTS[name]["t"] + 1).astype(np.uint16).tofile(path)
        return ["--set", f'data.train={{tokens {{ path: "{path}" dtype: UINT16 }}}}',
                "--set", "data.shuffle=false"]
    size, classes = IMAGES.get(name, (32, 10))
    shape = (n, 784) if name == "mlp" else (n, 3, size, size)
    feeds = ""
    for key, array in [("x", rng.standard_normal(shape).astype(np.float32)),
                       ("y", rng.integers(0, classes, n).astype(np.int32))]:
        path = os.path.join(out_dir, f"{name}_{key}.npy")
        np.save(path, array)
        feeds += f'npy {{ input: "{key}" path: "{path}" }} '
    return ["--set", f"data.train={{{feeds}}}", "--set", "data.shuffle=false"]


def sinter(name, config, steps, out_dir):
    """(compile s, ms per step, peak MiB) of Sinter's step: the median of
    the per-step times the program logs, steps 2 to 1 + steps of three runs.
    (Not whole-run wall times: the start, parameter initialization included,
    varies by seconds between runs of the larger models.)"""
    data = data_setting(base_model(name), steps, out_dir)
    prog = os.path.join(out_dir, name)
    precision = ["--set", "precision.compute=BF16"] if name.endswith(BF16) else []
    if name.endswith(WINOGRAD):
        data += ["--set", "precision.convolution=WINOGRAD"]
    start = time.perf_counter()
    subprocess.run([SINTERC, "--config", os.path.join(ROOT, config), *precision, "-o", prog],
                   check=True)
    compile_s = time.perf_counter() - start
    per_step, peak = [], 0.0
    for _ in range(3):
        out = subprocess.run([prog, "--config", os.path.join(ROOT, config), "--set",
                              f"steps={1 + steps}", "--set", "log.every=1", *data],
                             check=True, capture_output=True, text=True,
                             cwd=out_dir).stdout
        times = [float(v) * (1e3 if unit == "s" else 1.0)
                 for v, unit in STEP_TIME.findall(out)]
        if len(times) != 1 + steps:
            sys.exit(f"{name}: expected {1 + steps} logged steps, got:\n{out}")
        per_step += times[1:]
        found = MEMORY.search(out)
        peak = max(peak, float(found.group(1)) if found else 0.0)
    return compile_s, statistics.median(per_step), peak


def peer(framework, model, steps):
    """The peer's {first_s, ms, peak_mib}, or None when it failed."""
    try:
        out = subprocess.run([sys.executable, os.path.join(HERE, "peer_step.py"), framework,
                              model, str(steps), str(THREADS)],
                             capture_output=True, text=True, timeout=1200)
    except subprocess.TimeoutExpired:
        print(f"  {framework} {model}: timed out", file=sys.stderr)
        return None
    if out.returncode != 0:
        print(f"  {framework} {model}: failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def cell(value, fmt):
    return format(value, fmt) if value is not None else "-"


def main():
    global SINTERC
    args = sys.argv[1:]
    build = take_build_dir(args)
    names = [m[0] for m in MODELS]
    wanted = take_models(args, names, [n for n in names if n not in SLOW])
    models = [m for m in MODELS if m[0] in wanted]
    steps = int(args[0]) if args else 10
    SINTERC = sinterc_of(build)
    busy = wait_until_idle()
    import jax
    import torch
    rates = gemm_peak_gflops()
    peak = max(rates.values())
    state = (f"idle ({100 * busy:.0f}% busy before the run)" if busy < 0.05 else
             f"NOT IDLE ({100 * busy:.0f}% busy before the run): timings are skewed")
    print(f"training steps, {THREADS} threads, f32; torch {torch.__version__}, "
          f"jax {jax.__version__}; machine {state}")
    print(f"f32 GEMM peak (2048^3, the better of "
          + ", ".join(f"{k} {v:.1f}" for k, v in rates.items()) + f"): {peak:.1f} GFLOP/s")
    out_dir = os.path.join(build, "bench")
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    measured = {}  # the peers' results by the model they ran
    for name, config, flops in models:
        compile_s, ms, mib = sinter(name, config, steps, out_dir)
        ran = name.removesuffix(WINOGRAD)
        if ran not in measured:
            measured[ran] = {p: peer(p, ran, steps) for p in PEERS}
        rows.append((name, flops, compile_s, ms, mib, measured[ran]))
    print()
    print(f"{'ms per step':<17} {'sinter':>9} {'torch':>9} {'compile':>9} {'jax':>9} "
          f"{'/torch':>7} {'/compile':>9} {'/jax':>6}")
    for name, _, _, ms, _, peers in rows:
        t = {p: peers[p]["ms"] if peers[p] else None for p in PEERS}
        ratio = {p: ms / t[p] if t[p] else None for p in PEERS}
        print(f"{name:<17} {ms:>9.1f} {cell(t['torch'], '9.1f')} {cell(t['compile'], '9.1f')} "
              f"{cell(t['jax'], '9.1f')} {cell(ratio['torch'], '7.2f')} "
              f"{cell(ratio['compile'], '9.2f')} {cell(ratio['jax'], '6.2f')}")
    print()
    print(f"{'compile s':<17} {'sinterc':>9} {'compile':>9} {'jax':>9}   "
          f"(first step of torch.compile and jax.jit)")
    for name, _, compile_s, _, _, peers in rows:
        first = {p: peers[p]["first_s"] if peers[p] else None for p in PEERS}
        print(f"{name:<17} {compile_s:>9.2f} {cell(first['compile'], '9.2f')} "
              f"{cell(first['jax'], '9.2f')}")
    print()
    print(f"{'peak MiB':<17} {'sinter':>9} {'torch':>9} {'compile':>9} {'jax':>9}")
    for name, _, _, _, mib, peers in rows:
        m = {p: peers[p]["peak_mib"] if peers[p] else None for p in PEERS}
        print(f"{name:<17} {mib:>9.0f} {cell(m['torch'], '9.0f')} {cell(m['compile'], '9.0f')} "
              f"{cell(m['jax'], '9.0f')}")
    print()
    print(f"{'GEMM peak':<17} {'sinter':>9} {'torch':>9} {'compile':>9} {'jax':>9}   "
          f"(share of {peak:.0f} GFLOP/s)")
    for name, flops, _, ms, _, peers in rows:
        def share(step_ms):
            return f"{100 * flops / (step_ms * 1e-3) / (peak * 1e9):8.0f}%" if step_ms else "-"
        print(f"{name:<17} {share(ms):>9} " + " ".join(
            f"{share(peers[p]['ms'] if peers[p] else None):>9}" for p in PEERS))


if __name__ == "__main__":
    main()
