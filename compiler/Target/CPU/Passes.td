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

def CPUFoldTransposes : Pass<"sinter-cpu-fold-transposes", "mlir::ModuleOp"> {
  let summary = "Matmuls read transposed operands in place instead of copies";
  let description = [{
    On tensors, before bufferization. The backward pass of `x @ w^T` reads
    w, x and the output gradient transposed; each transpose was a copy made
    by generated loops, every micro-batch. oneDNN's matmul reads either
    operand transposed through its strides, so:

    - a `linalg.matmul` operand that is a `linalg.transpose` (permutation
      [1, 0]) is read in place, with the operand's indexing map swapped;
    - a `linalg.transpose` of a matmul's product C = A @ B (its only use,
      accumulated onto zeros) becomes the matmul B^T @ A^T.

    Only the four forms A or A^T times B or B^T remain, which
    `sinter-library-calls` hands to the library.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
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

#endif // SINTER_TARGET_CPU_PASSES_TD
