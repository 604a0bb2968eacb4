//===- Passes.td - The CPU target's passes -----------------*- tablegen -*-===//
#ifndef SINTER_TARGET_CPU_PASSES_TD
#define SINTER_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def CPUMathApproximations
    : Pass<"sinter-cpu-math-approximations", "mlir::ModuleOp"> {
  let summary = "Polynomial f32 exp, log, tanh, erf, ... that vectorize";
  let description = [{
    libm's scalar calls keep loops from vectorizing and dominated the time of
    transformer blocks (softmax, GELU). f32 `math` ops become MLIR's
    polynomial approximations, accurate to a few ulp; f64 ops keep libm,
    whose accuracy the f64 checks rely on.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::vector::VectorDialect"];
}

def CPUOutlineLoops : Pass<"sinter-cpu-outline-loops", "mlir::ModuleOp"> {
  let summary = "Moves each outermost loop nest into a function, once per kind";
  let description = [{
    After loops are made from linalg, every outermost `scf.parallel`, and
    every outermost `scf.for` that calls nothing, becomes a call of a
    private function `<function>_loop<N>` that holds the loop and returns
    its results. Loops around the steps' calls (the micro-batch loop) stay
    and have their inner loops outlined.

    Translating an OpenMP parallel region to LLVM IR outlines it, and each
    outlining scans the whole function that holds the region: with hundreds
    of regions in one step, translation grew with the square of the step.
    LLVM's loop passes were as slow on one function of hundreds of loops.

    A buffer the loop uses is an argument when the bare-pointer calling
    convention can pass it (static shape, identity layout); the pure ops
    that give it its other values (constants, index arithmetic, strided
    views) are cloned. So the same loop over another layer's buffers is the
    same function: equal functions are made once and called from every
    place, and each kernel is compiled once however deep the model. A loop
    that would need an argument the convention cannot pass stays in place.
    Outlined loops and repeated blocks (`sinter.block`) are marked
    `noinline`: inlined into every caller, they would make the step one
    giant function again.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def CPUCollapseInnerDims : Pass<"sinter-cpu-collapse-inner-dims", "mlir::ModuleOp"> {
  let summary = "Contiguous inner dimensions of a generic become one loop";
  let description = [{
    On buffers, before loops are made. Inside a thread only the innermost
    loop vectorizes, so a generic over image planes of 4x4 or 32x32 runs
    vector loops of 4 or 32 elements, and a sum reduces its lanes once per
    row. After the leading parallel dimensions the threads will share (as
    `sinter-cpu-parallel-outer-dims` picks them, with the same
    `min-parallel-iterations`), each run of consecutive dimensions with one
    iterator type that is contiguous in every indexing map is collapsed
    into one dimension (`linalg::collapseOpIterationDims`). Only generics
    on row-major buffers of static shape are taken, so contiguous in the
    map means contiguous in memory.
  }];
  let options = [
    Option<"minParallelIterations", "min-parallel-iterations", "int64_t",
           /*default=*/"64",
           "Iterations the threads' dimensions must have between them">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::memref::MemRefDialect"];
}

def CPUParallelOuterDims : Pass<"sinter-cpu-parallel-outer-dims", "mlir::ModuleOp"> {
  let summary = "Threads share outer dimensions; the inner ones vectorize";
  let description = [{
    After loops are made from linalg. An `scf.parallel` of several
    dimensions became one OpenMP loop over their product, which recovers
    every index with divisions per element and so never vectorizes its
    innermost, contiguous dimension. Each outermost `scf.parallel` without
    reductions keeps parallel only its fewest leading dimensions whose
    iterations number at least `min-parallel-iterations` (chunks enough for
    the threads); the dimensions inside become nested `scf.for` loops, in
    the same order, which LLVM is asked not to unroll: it would unroll a
    short row whole and then vectorize across rows with gathers, where a
    rolled row vectorizes along memory. A loop with bounds not known at
    compile time keeps its form. One nested in another (the loop over a
    partial row of a split column reduction) already runs inside a thread:
    it becomes sequential `scf.for` loops, not a parallel region of one
    thread per iteration of the loops around it. So does a nest of fewer
    than `min-parallel-work` iterations in all (its dimensions times the
    longest chain of `scf.for`s inside): a per-channel map or the last sum
    of a reduction's partial rows takes less time than waking the threads
    and joining them (a parallel region cost some 50 us here, while
    OpenMP's other threads finished oneDNN's work).
  }];
  let options = [
    Option<"minParallelIterations", "min-parallel-iterations", "int64_t",
           /*default=*/"64",
           "Iterations the parallel dimensions must have between them">,
    Option<"minParallelWork", "min-parallel-work", "int64_t",
           /*default=*/"16384",
           "Iterations a loop nest needs in all to run on several threads">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::scf::SCFDialect"];
}

def CPURegisterAccumulators
    : Pass<"sinter-cpu-register-accumulators", "mlir::ModuleOp"> {
  let summary = "A loop's running sum lives in a register, not in memory";
  let description = [{
    After loops are made from linalg, a reduction reads its output element,
    adds and writes it back on every iteration, each add waiting on the
    store before it. When a `memref.store` in an `scf.for`'s body block is
    the loop's only write to its buffer, and the loop's only read of that
    buffer is one `memref.load` of the same indices before it, the indices
    and the buffer defined outside the loop, the element is loaded once
    before the loop, carried as an iter_arg, and stored once after. Loops
    are taken innermost first, so the sum leaves a whole nest. The loop's
    other loads and stores use other buffers: bufferization gives each
    output of a loop a buffer of its own, which the memory plan keeps
    apart from its inputs and other outputs.
    A carried sum (`arith.addf` of the carried value) may be reassociated,
    so LLVM vectorizes it with partial sums in its lanes: its order then
    depends on the shapes and the machine's vector width, not on threads.
    Carried loops are kept rolled, as above.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect", "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def CPUExpandBF16 : Pass<"sinter-cpu-expand-bf16", "mlir::ModuleOp"> {
  let summary = "bf16 conversions as integer operations";
  let description = [{
    `arith.truncf` to bf16 (to nearest, ties to even, NaN kept) and
    `arith.extf` from it become bit operations on i16/i32: the same on every
    x86 CPU, with or without AVX512-BF16 (LLVM would otherwise call a
    runtime function that older C libraries lack), and they vectorize.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

#endif // SINTER_TARGET_CPU_PASSES_TD
