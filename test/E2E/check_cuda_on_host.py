"""The GPU check's correctness rows, run on the CPU: each program compiled
for CUDA with `sinterc --cuda-on-host` (its kernels as host loops, the
libraries' calls answered on host memory) against the CPU target's program.
What the CUDA target's compiler does (fusions, block reductions, packed
attention, pitched matmuls, bf16 activations, cuDNN's batch-norm calls)
is checked here, where there is no GPU; bench/gpu/checks.py defines the
rows and their tolerances, scripts/gpu-check.sh runs them on a GPU.

    python3 check_cuda_on_host.py WORKDIR [ROW...]

Rows: ops, ops_bf16, ops_bf16act (every op's forward and gradient), mlp,
gpt_tiny, gpt_tiny_heads32, resnet (training), strategies (gpt_tiny on two
ranks under DDP, ZERO1, ZERO2 and FULL_SHARD, against one), gpt2 (GPT-2 124M's gradients, f32 and
bf16).
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "gpu"))
import checks  # noqa: E402

EXAMPLES = os.path.join(ROOT, "examples")
failed = []


def run(cmd, cwd=None):
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if result.returncode != 0:
        sys.exit(f"command failed ({result.returncode}): {' '.join(cmd)}\n"
                 f"{result.stdout}{result.stderr}")
    return result.stdout


def programs(work, name, args, cwd=None, calls=()):
    """The CPU's program and the CUDA target's on the host, of `args`; the
    CUDA step must call each of the device library's `calls` (a row that
    stopped reaching them would compare the CPU with itself)."""
    cpu, cuda = os.path.join(work, name + "_cpu"), os.path.join(work, name + "_cuda")
    run(["sinterc", *args, "-o", cpu], cwd=cwd)
    run(["sinterc", *args, "--cuda-on-host", "-o", cuda], cwd=cwd)
    if calls:
        host = run(["sinterc", *args, "--target=cuda", "--emit=gpu", "-o", "-"], cwd=cwd)
        missing = [c for c in calls if f"call @sinter_cuda_{c}(" not in host]
        if missing:
            print(f"{name}: FAIL, its CUDA step calls no " + ", ".join(missing))
            failed.append(name)
    return cpu, cuda


def row(name, code):
    # checks.compare prints the row's numbers and verdict.
    if code != 0:
        failed.append(name)


def ops(work, variant):
    folder = os.path.join(work, "ops")
    flags = {"ops": [], "ops_bf16": ["--set", "precision.compute=BF16"],
             "ops_bf16act": ["--set", "precision.compute=BF16",
                             "--set", "precision.activations=BF16"]}[variant]
    tol = 1e-5 if variant == "ops" else 2e-2
    calls = {"ops": ["attention_qkv_f32", "attention_qkv_backward_f32", "attention_f32",
                     "attention_backward_f32", "batch_norm_f32", "batch_norm_backward_f32",
                     "conv2d_f32", "conv2d_backward_data_f32",
                     "conv2d_backward_weights_f32", "matmul_f32"],
             "ops_bf16": ["attention_qkv_bf16", "attention_qkv_backward_bf16",
                          "attention_bf16", "attention_backward_bf16", "matmul_bf16"],
             "ops_bf16act": ["matmul_bf16_rounded"]}[variant]
    cpu, cuda = programs(folder, variant, ["--config", "ops.pbtxt", *flags], cwd=folder,
                         calls=calls)
    common = ["--config", "ops.pbtxt", "--init", "init.safetensors"]
    for prog, side in ((cpu, "cpu"), (cuda, "cuda")):
        run([prog, *common, "--eval", "--outputs", f"{variant}_{side}_outputs"], cwd=folder)
        run([prog, *common, "--gradients", f"{variant}_{side}_gradients"], cwd=folder)
    for what in ("outputs", "gradients"):
        print(f"{variant} {what}: ", end="", flush=True)
        row(f"{variant} {what}", checks.compare(
            "npy", os.path.join(folder, f"{variant}_cuda_{what}"),
            os.path.join(folder, f"{variant}_cpu_{what}"), tol))


def noise_floor(work, name, cpu, args):
    """Each tensor's float32 noise floor: the CPU program's runs from its
    start perturbed at float32's rounding, against its own run."""
    start = os.path.join(work, name + "_start.safetensors")
    run([cpu, *args, "--set", "steps=0", "--save", start])
    runs = []
    for seed in (1, 2):
        perturbed = os.path.join(work, f"{name}_start{seed}.safetensors")
        checks.perturb(start, perturbed, seed)
        runs.append(os.path.join(work, f"{name}_run{seed}.safetensors"))
        run([cpu, *args, "--init", perturbed, "--save", runs[-1]])
    floor = os.path.join(work, name + "_floor.json")
    checks.noise_floor(floor, os.path.join(work, name + "_cpu.safetensors"), runs)
    return floor


def training(work, name, compile_args, run_args, tol, calls=()):
    cpu, cuda = programs(work, name, compile_args, calls=calls)
    for prog in (cpu, cuda):
        run([prog, *run_args, "--save", prog + ".safetensors"])
    floor = noise_floor(work, name, cpu, run_args)
    print(f"{name}: ", end="", flush=True)
    row(name, checks.compare("safetensors", cuda + ".safetensors", cpu + ".safetensors",
                             tol, floor))


def strategies(work):
    """gpt_tiny compiled for CUDA under each parallel.strategy on two ranks
    (Gloo carrying the collectives), against the CPU's program on one rank:
    the step over the same global batch."""
    config = ["--config", os.path.join(EXAMPLES, "gpt", "gpt_tiny.pbtxt"), "--set", "steps=5"]
    cpu = os.path.join(work, "strategies_cpu")
    run(["sinterc", *config, "-o", cpu])
    run([cpu, "--save", cpu + ".safetensors"])
    floor = noise_floor(work, "strategies", cpu, [])
    for strategy in ("DDP", "ZERO1", "ZERO2", "FULL_SHARD"):
        cuda = os.path.join(work, f"{strategy}_cuda")
        run(["sinterc", *config, "--set", f"parallel.strategy={strategy}", "--set",
             "parallel.world_size=2", "--cuda-on-host", "-o", cuda])
        run(["sinter-run", "-n", "2", cuda, "--set", "parallel.collectives=GLOO",
             "--save", cuda + ".safetensors"])
        print(f"{strategy} on 2 ranks: ", end="", flush=True)
        row(strategy, checks.compare("safetensors", cuda + ".safetensors",
                                     cpu + ".safetensors", 1e-4, floor))


def gpt2(work):
    """GPT-2 124M at its full width (T=128): the gradients of one batch, in
    f32 and in bf16 with bf16 activations and residual stream, where the
    logits' rows (50,257) are pitched and attention is packed in 12 heads
    of 64."""
    folder = os.path.join(work, "gpt2")
    os.makedirs(folder, exist_ok=True)
    config = os.path.join(folder, "gpt2.pbtxt")
    with open(config, "w") as f:
        f.write(f'model: "{os.path.join(EXAMPLES, "gpt", "gpt.sn")}"\n'
                'shapes { key: "T" value: 128 }\nbatch { global: 2 micro: 2 }\n'
                "optimizer { adamw { lr: 6e-4 } }\ndata { train { synthetic { } } }\n")
    bf16 = ["--set", "precision.compute=BF16", "--set", "precision.activations=BF16",
            "--set", "precision.residual=BF16"]
    for name, flags, tol, calls in (
            ("gpt2", [], 1e-5, ["matmul_pitched_f32", "attention_qkv_f32"]),
            ("gpt2_bf16", bf16, 2e-2, ["matmul_pitched_bf16_rounded", "attention_qkv_bf16"])):
        cpu, cuda = programs(folder, name, ["--config", config, *flags], calls=calls)
        for prog in (cpu, cuda):
            run([prog, "--config", config, "--gradients", prog + "_gradients"])
        print(f"{name} gradients: ", end="", flush=True)
        row(f"{name} gradients", checks.compare("npy", cuda + "_gradients",
                                                cpu + "_gradients", tol))
        for prog in (cpu, cuda):  # 500 MB each
            shutil.rmtree(prog + "_gradients")


ROWS = {
    "ops": lambda w: ops(w, "ops"),
    "ops_bf16": lambda w: ops(w, "ops_bf16"),
    "ops_bf16act": lambda w: ops(w, "ops_bf16act"),
    "mlp": lambda w: training(
        w, "mlp", ["--config", os.path.join(EXAMPLES, "mlp", "mlp.pbtxt")],
        ["--config", os.path.join(w, "mlp", "train.pbtxt")], 1e-4),
    "gpt_tiny": lambda w: training(
        w, "gpt_tiny", ["--config", os.path.join(EXAMPLES, "gpt", "gpt_tiny.pbtxt"),
                        "--set", "steps=20"], [], 1e-4),
    # Two heads of 32: the f32 attention's fused calls.
    "gpt_tiny_heads32": lambda w: training(
        w, "gpt_tiny_heads32", ["--config", os.path.join(EXAMPLES, "gpt", "gpt_tiny.pbtxt"),
                                "--set", "steps=20", "--set", "set.heads=2"], [], 1e-4,
        calls=["attention_qkv_f32", "attention_qkv_backward_f32"]),
    "resnet": lambda w: training(
        w, "resnet", ["--config", os.path.join(EXAMPLES, "resnet", "resnet.pbtxt"),
                      "-D", "width=16", "--set", "batch.global=32", "--set", "batch.micro=32",
                      "--set", "steps=10"], [], 1e-3,
        calls=["conv2d_f32", "batch_norm_f32", "batch_norm_backward_f32"]),
    "strategies": strategies,
    "gpt2": gpt2,
}


def main():
    work = os.path.abspath(sys.argv[1])
    wanted = sys.argv[2:] or list(ROWS)
    os.makedirs(work, exist_ok=True)
    checks.prepare(work)
    for name in wanted:
        ROWS[name](work)
    if failed:
        sys.exit("FAIL: " + ", ".join(failed))
    print("the CUDA target's programs match the CPU's")


if __name__ == "__main__":
    main()
