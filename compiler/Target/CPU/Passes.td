//===- Passes.td - The CPU target's passes -----------------*- tablegen -*-===//
#ifndef SINTER_TARGET_CPU_PASSES_TD
#define SINTER_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def CPURecordPlan : Pass<"sinter-cpu-record-plan", "mlir::ModuleOp"> {
  let summary = "Records each step's buffer plan before bufferization";
  let description = [{
    For each function made by `graph-model-to-func`, builds the plan of its
    buffers (runtime/contract/sinter_plan.proto): arguments in order, then
    results (which bufferization turns into trailing output arguments), each
    with its name, kind, dtype, static shape and initialiser. The serialized
    plan is stored on the function as `sinter.plan`.
  }];
}

def CPULibraryCalls : Pass<"sinter-cpu-library-calls", "mlir::ModuleOp"> {
  let summary = "Hands f32 matmuls and convolutions to the runtime's library";
  let description = [{
    After bufferization, replaces `linalg.matmul`, `linalg.batch_matmul` and
    `linalg.conv_2d_nchw_fchw` on f32 buffers with calls of the runtime's
    `sinter_cpu_matmul_f32` and `sinter_cpu_conv2d_f32` (abi.h, oneDNN
    inside). Other element types (f64) stay linalg and become loops.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

def CPURuntimeCalls : Pass<"sinter-cpu-runtime-calls", "mlir::ModuleOp"> {
  let summary = "Turns train ops into calls of the runtime's C ABI";
  let description = [{
    After bufferization and the out-parameter calling convention:
    `train.micro_batch_count`, `train.global_batch`, `train.random_key`,
    `train.sum_over_ranks`, `train.load_input`, `train.bucket_ready` and
    `train.gradients_ready` become calls of the `sinter_rt_*` functions of
    `runtime/contract/abi.h`. A bucket's gradients must be the step's gradient
    arguments (the runtime's bucket slots).
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect"];
}

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

def CPULowerCopies : Pass<"sinter-cpu-lower-copies", "mlir::ModuleOp"> {
  let summary = "Turns memref.copy into linalg.copy";
  let description = [{
    Bufferization copies buffers with `memref.copy`, which the LLVM lowering
    turns into a call to MLIR's C runner library when a layout is not
    contiguous. Programs link only Sinter's runtime, so every copy becomes a
    `linalg.copy`, lowered to loops like any other linalg op.
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

def CPUEntryPoints : Pass<"sinter-cpu-entry-points", "mlir::ModuleOp"> {
  let summary = "Adds the C entry points and the embedded plans";
  let description = [{
    Runs on the LLVM dialect, after the functions were converted with the
    bare-pointer calling convention. For each function with a `sinter.plan`
    and a `sinter.phase`, the step's buffer arguments become loads from one
    read-only table of buffer pointers in plan order, and
    `void sinter_step_<phase>(void **buffers)` calls it with that table. It
    also adds the constants `sinter_plan_<phase>` (the serialized plan) and
    `sinter_plan_<phase>_size`. These symbols are the whole contract between
    generated code and the runtime (see runtime/contract/abi.h).
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

#endif // SINTER_TARGET_CPU_PASSES_TD
