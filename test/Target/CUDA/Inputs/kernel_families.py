"""One line per CUDA kernel of a compiled model, for FileCheck: its name,
the source line it computes, the ops of its gpu-dialect body that tell its
family (a loop for a reduction, a block's all-reduce, the math functions), and the PTX
instructions that carry them out.

    python3 kernel_families.py STEPS.gpu STEPS.ptx
"""
import re
import sys

# What tells a kernel's family apart, in the gpu dialect and in the PTX.
IR_OPS = ["scf.for", "math.exp", "math.log", "math.tanh", "math.erf",
          "math.rsqrt", "math.sqrt", "arith.maximumf", "arith.maxnumf",
          "arith.divf", "arith.select", "arith.cmpf", "gpu.all_reduce"]
PTX_OPS = ["ld.global", "st.global", "ex2.approx", "lg2.approx", "sqrt.rn",
           "rsqrt.approx", "div.rn", "max.f32", "bra", "setp", "shfl.sync",
           "bar.sync"]


def kernels_of_ir(text):
    """{kernel: (source, [ops])} from --emit=gpu output."""
    table = re.search(r"sinter\.cuda_kernels = \[(.*?)\]\]", text)
    sources = dict(re.findall(r'\["([^"]+)", "([^"]*)"', table.group(0)))
    bodies = re.split(r"\n\s*gpu\.func @", text.split("gpu.module @sinter_kernels", 1)[1])
    out = {}
    for body in bodies[1:]:
        name = body.split("(", 1)[0]
        ops = [op for op in IR_OPS if re.search(r"\b" + re.escape(op) + r"\b", body)]
        out[name] = (sources.get(name, "?"), ops)
    return out


def kernels_of_ptx(text):
    """{kernel: [instructions]} from --emit=ptx output."""
    out = {}
    for part in re.split(r"\.visible \.entry ", text)[1:]:
        name = part.split("(", 1)[0]
        body = part.split("{", 1)[1].split("\n}", 1)[0]
        out[name] = [op for op in PTX_OPS if re.search(r"\s" + re.escape(op), body)]
    return out


def main():
    with open(sys.argv[1]) as f:
        ir = kernels_of_ir(f.read())
    with open(sys.argv[2]) as f:
        ptx = kernels_of_ptx(f.read())
    missing = sorted(set(ir) ^ set(ptx))
    if missing:
        sys.exit(f"kernels in one output but not the other: {missing}")
    for name in sorted(ir, key=lambda n: int(n.rsplit("_k", 1)[1])):
        source, ops = ir[name]
        source = source.rsplit("/", 1)[-1]
        print(f"kernel {name} at {source}: {' '.join(ops) or '-'} | "
              f"{' '.join(ptx[name])}")
    print(f"{len(ir)} kernels")


if __name__ == "__main__":
    main()
