//===- Passes.td - Host code passes shared by every target -*- tablegen -*-===//
//
// A step's host code is LLVM for the machine the program runs on, whatever
// the device: its plan, its calls of the runtime's C ABI and its entry
// points are the same for the CPU and CUDA targets.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TARGET_HOST_PASSES_TD
#define SINTER_TARGET_HOST_PASSES_TD

include "mlir/Pass/PassBase.td"

def RecordPlan : Pass<"sinter-record-plan", "mlir::ModuleOp"> {
  let summary = "Records each step's buffer plan before bufferization";
  let description = [{
    For each function made by `graph-model-to-func`, builds the plan of its
    buffers (runtime/contract/sinter_plan.proto): arguments in order, then
    results (which bufferization turns into trailing output arguments), each
    with its name, kind, dtype, static shape and initialiser. The serialized
    plan is stored on the function as `sinter.plan`.
  }];
}

def MatmulBias : Pass<"sinter-matmul-bias", "mlir::ModuleOp"> {
  let summary = "Adds a bias in the matmul that makes the product";
  let description = [{
    On linalg on tensors, after the target's matmul forms are settled: in an
    elementwise `linalg.generic`, `p + b` where `p` is an f32
    `linalg.matmul` onto zeros (possibly through an `expand_shape` that
    keeps its columns last) read nowhere else and at the same place, and `b`
    a vector read along the last loop: the matmul starts from `b`
    broadcast over its rows (`linalg.broadcast`), and the loop reads the sum
    instead of adding. A loop result that then only repeats an input is
    replaced by that input, and unused operands and results are dropped.
    `sinter-library-calls` turns the broadcast and the matmul into one call
    with a bias (cuBLASLt's bias epilogue).
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def BF16MatmulResults : Pass<"sinter-bf16-matmul-results", "mlir::ModuleOp"> {
  let summary = "Matmuls that make activations write them rounded to bf16";
  let description = [{
    On linalg on tensors, after `sinter-matmul-bias` and
    `sinter-accumulate-products`, with `precision { activations: BF16 }`
    (the module's `sinter.activations` is "bf16", or the `activations`
    option): a `linalg.matmul` or `linalg.batch_matmul` of bf16 operands in
    a library form, one of them a parameter (or its bf16 copy, through
    views, roundings and every call of a private function), onto zeros or
    an f32 bias's rows, writes a bf16 result instead: onto bf16 zeros, or
    onto the rows of the bias rounded to bf16. The library sums in f32 and
    rounds once as it writes (torch.autocast's rule). Its readers read the
    bf16 value: a `linalg.generic` widens the element in its body (a
    rounding of it becomes the element itself), reshapes, slices and
    `tensor.extract` take the bf16 type, a private function's result and
    then its callers' readers, and an argument every call passes in bf16,
    become bf16; any other reader gets a widened copy. A parameter's
    gradient (no operand a parameter) keeps its f32 sum. A loop that writes
    a value it rounded to bf16 and widened back (precision.residual's
    rounding, fused into the loop that makes the sum), without reading its
    output's old value, writes the bf16 value instead, its readers
    rewritten the same way.
  }];
  let options = [
    Option<"activations", "activations", "std::string", /*default=*/"\"\"",
           "f32 or bf16 (default: the module's sinter.activations)">,
  ];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def AccumulateProducts : Pass<"sinter-accumulate-products", "mlir::ModuleOp"> {
  let summary = "Adds weight gradients into their accumulators in the library call";
  let description = [{
    On linalg on tensors, after the target's matmul forms are settled: an
    elementwise `acc + x` whose `x` is a `linalg.matmul` onto zeros used
    only there (a weight's gradient added to the gradients of the earlier
    micro-batches) becomes the `linalg.matmul` onto `acc` itself, which
    `sinter-library-calls` turns into one call that adds into `acc` (beta
    = 1). And a fill of zeros that several products start from becomes a
    fill of each product's own, just before it, so that after bufferization
    the library call can drop it. Across calls: a product that a private
    function returns and every caller adds to an accumulator it already
    holds (a block's weight gradient) is added into that accumulator, passed
    as a new argument, inside the function. A sum `acc + (x + ... + p)` with
    `p` such a product (a tied weight's gradient: GPT-2's token embedding is
    also its output projection) becomes the product onto `acc`, made where
    `p` was, plus the rest; and `acc + s`, `s` a loop that only adds rows
    into a tensor of zeros (an embedding's gradient), becomes that loop
    started from `acc`. With `convolutions` (the CPU), a library
    convolution's kernel gradient is such a product too: added to `acc`, it
    becomes `train.conv2d_backward_weights` into `acc` with `accumulate`,
    in the function or across calls as above.
  }];
  let options = [
    Option<"convolutions", "convolutions", "bool", /*default=*/"false",
           "Add convolutions' kernel gradients into their accumulators too">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "sinter::train::TrainDialect"];
}

def RuntimeCalls : Pass<"sinter-runtime-calls", "mlir::ModuleOp"> {
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
                           "mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect"];
}

def InterruptibleMicroBatches : Pass<"sinter-interruptible-micro-batches",
                                      "mlir::ModuleOp"> {
  let summary = "Lets the runtime skip the rest of a step's micro-batches";
  let description = [{
    After the runtime calls: the body of each loop that loads a micro-batch's
    inputs (`sinter_rt_load_input`) runs only when
    `sinter_rt_micro_batch_begin(i)` returns non-zero, and otherwise passes
    its carried values on unchanged. A run asked to stop (Ctrl-C, SIGTERM)
    then drops its unfinished step at the next micro-batch instead of
    computing the rest of it; the runtime also leaves the update out. A
    micro-batch loaded outside such a loop (the last one, whose backward
    pass starts the gradient buckets) is announced with the same call, but
    runs whatever the answer.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect", "mlir::scf::SCFDialect"];
}

def LowerCopies : Pass<"sinter-lower-copies", "mlir::ModuleOp"> {
  let summary = "Turns memref.copy into linalg.copy";
  let description = [{
    Bufferization copies buffers with `memref.copy`, which the LLVM lowering
    turns into a call to MLIR's C runner library when a layout is not
    contiguous. Programs link only Sinter's runtime, so every copy becomes a
    `linalg.copy`, lowered to loops like any other linalg op. A copy between two
    equal static subviews of one buffer (bufferization leaves one where a
    piece was computed in its place) copies nothing and is dropped.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def EntryPoints : Pass<"sinter-entry-points", "mlir::ModuleOp"> {
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

def FoldMatmulTransposes : Pass<"sinter-fold-matmul-transposes", "mlir::ModuleOp"> {
  let summary = "Matmuls read transposed operands in place instead of copies";
  let description = [{
    On tensors, before bufferization. The backward pass of `x @ w^T` reads
    w, x and the output gradient transposed; each transpose was a copy made
    by generated loops, every micro-batch (on a GPU, GPT-2 124M's backward
    copied 0.4 GB a layer for them). oneDNN's and cuBLASLt's matmuls read
    either operand transposed in place, so:

    - a `linalg.matmul` operand that is a `linalg.transpose` (permutation
      [1, 0]) is read in place, with the operand's indexing map swapped;
    - a `linalg.transpose` of a matmul's product C = A @ B (its only use,
      accumulated onto zeros) becomes the matmul B^T @ A^T;
    - with `batched`, a `linalg.batch_matmul` operand that is a copy
      swapping its last two axes (a `linalg.transpose`, or the generic copy
      through that permutation), possibly with its leading axes collapsed
      into the batch after it, is read in place, with the operand's map
      swapped: attention's backward pass multiplies by [batch, T, T]
      transposes (on the CPU, GPT-2 124M at T=1024 spent a tenth of its step
      copying them).

    Only the four forms A or A^T times B or B^T remain, which
    `sinter-library-calls` hands to the library.
  }];
  let options = [
    Option<"batched", "batched", "bool", /*default=*/"true",
           "Also fold into linalg.batch_matmul operands">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def LibraryCalls : Pass<"sinter-library-calls", "mlir::ModuleOp"> {
  let summary = "Hands f32 matmuls and convolutions to the device's library";
  let description = [{
    After bufferization, replaces `linalg.matmul` and `linalg.batch_matmul`
    in one of their four forms (either operand read as stored or transposed;
    on CUDA a batched first operand only as stored) and
    `linalg.conv_2d_nchw_fchw` on dense f32 buffers with calls of the
    runtime's `sinter_<device>_matmul_f32` and `sinter_<device>_conv2d_f32`
    (abi.h): oneDNN inside for `device=cpu`, cuBLASLt and cuDNN for
    `device=cuda`. Other element types (f64) stay linalg.
  }];
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "cpu or cuda: whose library functions to call">
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::LLVM::LLVMDialect",
                           "mlir::memref::MemRefDialect", "mlir::arith::ArithDialect"];
}

#endif // SINTER_TARGET_HOST_PASSES_TD
