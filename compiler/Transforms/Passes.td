//===- Passes.td - Sinter's passes on upstream dialects ----*- tablegen -*-===//
#ifndef SINTER_TRANSFORMS_PASSES_TD
#define SINTER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseElementwise : Pass<"sinter-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuses elementwise linalg maps into elementwise consumers";
  let description = [{
    Chains of elementwise maps (and the broadcasts and transposes feeding
    them) become one loop nest. A producer whose value is also used later
    (kept for the backward pass) is fused into its first consumer, which
    then yields the producer's value as well: one loop writes both, and the
    second loop that read the value back is gone. A producer read element
    by element by a reduction, and by nothing else, is fused into it, so
    `(x - mean)^2` is summed without being stored. A map of a few ops that
    reads one large tensor (the rest broadcasts) and is read element by
    element by several loops of its block, and by nothing else, is computed
    again in each of them, so that it is never stored (layer norm's
    backward pass reads x and dy, not x - mean and dy * gamma), with
    `recompute-cheap-maps` (the CUDA target's: a GPU's generated loops are
    bound by memory; on the CPU, GPT-2 124M's step took a third longer);
    a matmul's product plus a bias is left for `sinter-matmul-bias`. A loop
    that reads a value through a `tensor.expand_shape` that only adds unit
    dimensions (a row's statistic as [rows, 1]) reads the value itself, so
    the loop that made it fuses across the reshape. Nothing is fused
    into a matmul or a convolution (named ops, which stay library calls),
    nor into a reduction that would read a producer's element more than
    once.
  }];
  let options = [
    Option<"recomputeCheapMaps", "recompute-cheap-maps", "bool", /*default=*/"false",
           "compute a cheap map again in each loop that reads it instead of storing it">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::affine::AffineDialect"];
}

def MergePaddedSums : Pass<"sinter-merge-padded-sums", "mlir::ModuleOp"> {
  let summary = "Sums of zero-padded pieces become one tensor of the pieces";
  let description = [{
    A value read through several slices (attention's q, k and v, sliced
    from one projection) gets the sum of their gradients, each padded with
    zeros to the value's shape. When an elementwise sum's inputs are each a
    chain of `tensor.insert_slice`s of pieces and zeros (into zeros, or
    into an empty tensor they cover), and no two pieces overlap, the sum is
    the pieces inserted into one tensor (zeros where none is): no
    full-size zero tensors, no additions.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def SlicesInPlace : Pass<"sinter-slices-in-place", "mlir::ModuleOp"> {
  let summary = "Pieces inserted through a reshape go into an expanded destination";
  let description = [{
    `tensor.insert_slice` of a `tensor.collapse_shape` (static shapes, unit
    strides, not rank-reducing) becomes the collapse of the uncollapsed
    piece inserted into the destination expanded the same way, when each
    collapsed group's offset and extent in the destination are multiples of
    the group's inner dimensions. Consecutive pieces then share one expanded
    destination. Then, in the functions of repeated blocks (`sinter.block`),
    empty-tensor elimination lets the loop that makes a piece write it in its
    place instead of into a buffer that is copied. Not in step functions:
    there it would move a gradient into the buffer of what reads it, and the
    runtime sums each gradient in its own buffer.
  }];
  // Loaded before the elimination runs: they attach the subset and
  // bufferization interfaces it looks for.
  let dependentDialects = ["mlir::tensor::TensorDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

def NarrowCallBoundaries : Pass<"sinter-narrow-call-boundaries", "mlir::ModuleOp"> {
  let summary = "Calls pass the moved or rounded copies the other side reads, not the value";
  let description = [{
    On linalg on tensors, across calls to private functions whose calls are
    all known. A chain of copies of a value is made of static slices,
    reshapes, transposes and `linalg.generic`s that only move or round one
    input (parallel loops, permutation maps, float casts in the body). When
    a function's argument is read only through such a chain, the chain's
    results read elsewhere are dense and take no more bytes than the
    argument, and every caller passes a known call's result, the callers
    make the chain and pass its results instead. When every caller reads a
    function's result only through the same chain, the function makes it
    and returns its results instead. A rounding (an elementwise loop with a
    float truncation, no wider than its input) that is an argument's only
    reader also moves to callers that make the operand in a loop only the
    call reads, so fusion has that loop write it rounded. A layer's backward
    function then takes the bf16 query, key and value its forward function
    made for attention, not the f32 projection they were cut from, and with
    `residual: BF16` each layer's backward function returns its residual
    stream's gradient rounded, written in bf16, where the next one rounded
    the f32 gradient it was given. CSE afterwards merges the
    moved chain with the forward function's own, and a moved rounding of a
    loop's output that the loop also writes rounded becomes that output.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def RowReductionsAcrossCalls
    : Pass<"sinter-row-reductions-across-calls", "mlir::ModuleOp"> {
  let summary = "Row reductions move to where their rows are made, across calls";
  let description = [{
    On linalg on tensors, across calls to private functions whose calls are
    all known. A `linalg.generic` that reduces the rows of one argument
    alone (one input read through a permutation whose last index is a
    reduced loop, parallel loops first, inits that are fills of constants
    into static `tensor.empty`s, a body that reads only constants from
    outside it) moves into the callers, which pass its
    results as new arguments, when every caller's operand is a loop's or a
    call's result. A row reduction that every call's caller makes alike of
    the same result, which the function makes in a loop, moves into the
    function, which returns its results as new results. A layer's first
    layer norm's statistics are then made at the end of the previous layer,
    after the loop that wrote its rows (and by the embedding's side for the
    first layer), where the CUDA target fuses the two.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def NarrowWidenedTensors : Pass<"sinter-narrow-widened-tensors", "mlir::ModuleOp"> {
  let summary = "An f32 tensor of widened bf16 values that only loops read is made in bf16";
  let description = [{
    On linalg on tensors. An f32 tensor made only of bf16 values widened
    (by `linalg.generic`s whose body is one `arith.extf` of a bf16 input,
    then static reshapes and insertions into empty tensors), which only
    `linalg.generic`s read as inputs, is made in bf16 by the same ops, and
    each reader widens the element it reads; a reader's rounding of it
    back to bf16 is the element itself, and a reader left copying its
    input unchanged is dropped. The values are the same. cuDNN's attention
    gradients then reach the query-key-value gradient, its bias gradient
    and its matmuls in bf16, never written in f32.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect"];
}

def OnePassVariance : Pass<"sinter-one-pass-variance", "mlir::ModuleOp"> {
  let summary = "A sum of squared deviations from a row's mean reads the row once";
  let description = [{
    On linalg on tensors with static shapes. A `linalg.generic` that sums
    (x - m)^2 of two f32 inputs into an f64 output filled with 0, where x
    is read at every loop (a permutation map) and m at none of the reduced
    ones (layer norm's variance after its mean), becomes
    sum x^2 - m (2 sum x - n m), n the number of reduced elements: two
    reductions of x alone (sum x is the same as the mean's own, which CSE
    then shares, and sum x^2 a sibling that
    `sinter-merge-sibling-reductions` merges with it) and an elementwise
    combination per output, clamped at 0 (a row without spread may round
    a little below). In f64, x^2 of an f32 x is exact, and the
    cancellation loses less than the f32 inputs carry until the mean is
    some 10^7 spreads from 0. An output map must name every parallel loop.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect"];
}

def MergeSiblingReductions : Pass<"sinter-merge-sibling-reductions", "mlir::ModuleOp"> {
  let summary = "Reductions over the same loops that read an input in common become one";
  let description = [{
    On linalg on tensors: a `linalg.generic` with a reduced loop, on static
    shapes, without `linalg.index` or a discardable attribute, whose outputs
    are plain folds (add, mul, max, min), is merged into an earlier such one
    of its block that runs the same loops (iterators and ranges) and reads a
    tensor in common at the same place, when every value the later one reads
    (its operands, and what its body takes from outside) is defined before
    the earlier one: one generic in the earlier one's place
    takes the inputs of both (shared ones once) and yields the outputs of
    both, each with its own fold. Layer norm's backward pass then reads dy
    once for its two row sums and once for its two column sums.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def OnlineSoftmax : Pass<"sinter-online-softmax", "mlir::ModuleOp"> {
  let summary = "A softmax's row maximum and sum of exponentials in one pass";
  let description = [{
    On linalg on tensors: a reduction that sums exp(x - m) (extended to a
    wider float or not) over rows of x, where m is the row maximum of the
    same x by another reduction over the same loops, becomes one generic
    with both outputs: each x raises the running maximum and rescales the
    running sum by exp(m_old - m_new) (0 for a maximum of -inf, so rows of
    -inf give no NaN). The generic is marked `sinter.online_softmax`
    (OnlineSoftmax.h) so that a target splitting a row among threads
    combines the partial pairs. It takes the maximum's place, or the sum's
    when the sum's accumulator comes later and nothing else reads the
    maximum before the sum. Only a sum that starts from a fill of 0 is
    merged.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::math::MathDialect",
                           "mlir::arith::ArithDialect"];
}

def WriteOverDeadInputs : Pass<"sinter-write-over-dead-inputs", "mlir::ModuleOp"> {
  let summary = "An elementwise loop writes its result over an input nothing reads after it";
  let description = [{
    On linalg on tensors, before bufferization: a `linalg.generic` of
    parallel loops with one result, written into a fresh tensor (a
    `tensor.empty`, or a view of one) it does not read, whose input has the
    result's type and indexing map (a permutation) and is itself a fresh
    tensor the step made, takes that input as its init when nothing reads
    the input's buffer (its views and the inits it was written into) after
    the loop. A later reader whose only reads of it are `tensor.extract`s
    at indices its own inputs and loop indices give (the loss's pick of
    each target's logit) has those picks made first, as early as what they
    read allows, by a parallel loop over its iterations into a tensor it
    then reads instead; other pure ops of the loop's block that read it
    after the loop, and read nothing made after the loop, move before it.
    Bufferization then writes the result in place: cross-entropy's gradient
    over the logits.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def ResultsOnce : Pass<"sinter-results-once", "mlir::ModuleOp"> {
  let summary = "A private function returns each value once, not also reshaped";
  let description = [{
    On tensors, for private functions whose calls are all known: a result
    that is the same value as an earlier result, or a static reshape of a
    result that stays, is dropped, and each call makes it from that result.
    Narrowing values across calls can leave a layer's forward function
    returning attention's output as [B, T, C] and as [B*T, C]; bufferized,
    the second would be a copy into a buffer of its own. Run it before
    bufferization.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def SplitEmptyTensors : Pass<"sinter-split-empty-tensors", "mlir::ModuleOp"> {
  let summary = "Gives every use of a tensor.empty its own tensor.empty";
  let description = [{
    CSE merges the shape-only `tensor.empty` ops that linalg ops write into,
    so one value of a deep model can have hundreds of users. One-Shot
    Bufferize's conflict analysis treats all of them as aliases of one
    buffer and compares every pair: its time grows with the square of the
    model's depth. One `tensor.empty` per use carries the same meaning (each
    is a new, uninitialised tensor) and keeps that analysis linear. First,
    a `linalg.fill` of a `tensor.empty` that several ops write into (the
    CSE'd zeros of several reductions' accumulators, or of gradient
    accumulators that loops carry) becomes a fill per op or loop operand,
    each of its own `tensor.empty`: bufferization would otherwise fill one
    buffer and copy it for every op but the last. Run it just before
    bufferization, after the last CSE.
  }];
  let dependentDialects = ["mlir::tensor::TensorDialect", "mlir::linalg::LinalgDialect"];
}

def ParallelReductions : Pass<"sinter-parallel-reductions", "mlir::ModuleOp"> {
  let summary = "Shapes reductions for parallel loops";
  let description = [{
    On linalg on tensors, before loops are made, for every target: a
    generic's parallel loops are what a target spreads over its threads (a
    GPU thread per iteration, a core per chunk of iterations), its
    reductions running sequentially inside. So each `linalg.generic`'s
    parallel loops become its outermost ones: a reduction over rows (a bias
    gradient) then runs a thread per column, not one parallel loop per row,
    whose fork and join cost more than its work. And a generic whose every
    loop is a reduction (a loss, a gradient's squared norm) is split: its
    outermost loop becomes parallel, reducing each slice into a vector of
    partial results (started at the combiner's identity), and a second
    generic reduces the vector into the original result. Only sums, maxima
    and minima are split, and only when the outermost loop has at least
    `min-rows` iterations. The order of the sums is fixed by the shapes
    alone, so results do not depend on the number of threads.

    With `split-columns` (the CPU), a sum whose reductions all come before
    its parallel loops, the result indexed by those in order (a channel's
    sum over N, H and W of an NHWC tensor), is split the same way instead
    of reordered: a partial row per iteration of its outermost loop, whose
    inner loops read along memory, then the rows summed. Reordered, each
    thread would read a column with the stride of a row. Only when each
    partial row sums `min-rows` rows or more (not a matrix's column sums,
    whose partial rows would be the matrix again).
  }];
  let options = [
    Option<"minRows", "min-rows", "int64_t", /*default=*/"16",
           "split only reductions with at least this many outer iterations">,
    Option<"splitColumns", "split-columns", "bool", /*default=*/"false",
           "split reductions over leading loops into partial rows">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def PlanMemory : Pass<"sinter-plan-memory", "mlir::ModuleOp"> {
  let summary = "Places a step's buffers in one arena, by liveness";
  let description = [{
    After bufferization, every `memref.alloc` of a step (a function with
    `sinter.phase`) is live from the allocation to its last use, through any
    view of it. The memory planner (compiler/MemoryPlan) assigns each an
    offset in one arena so that buffers live at the same time never overlap;
    each allocation becomes a `memref.view` of the arena, which the step
    takes as a new last argument tagged `sinter.workspace`, and its
    deallocations disappear. The arena's size is recorded as
    `sinter.arena_bytes`; the runtime allocates it once. Allocations must be
    static. Allocations in a loop's body are planned first into an arena of
    their own, which is then one allocation of the enclosing block, live
    while the loop runs. A repeated block's function (`sinter.block`) is
    planned before the steps, into a scratch arena it takes as a new last
    argument: each call passes one, allocated in the caller just before the
    call, so the scratch of every layer shares the caller's bytes.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect"];
}

def FoldInPlaceUpdates : Pass<"sinter-fold-in-place-updates", "mlir::ModuleOp"> {
  let summary = "Drops the results that update an argument in place";
  let description = [{
    After bufferization, each function result marked `sinter.updates = i`
    (a parameter or optimizer moment the train step updates) must be
    argument i's buffer, possibly through casts: it is dropped, and the
    argument is the buffer the update wrote. A result that is another
    buffer is an error.
  }];
}

def DistinctResults : Pass<"sinter-distinct-results", "mlir::ModuleOp"> {
  let summary = "Gives every buffer a step returns its own allocation";
  let description = [{
    After bufferization, a step or a repeated block's function may return
    one buffer for two results (two outputs of equal value) or return an
    argument or a view. A reshaped view of an allocation nothing else
    returns is allocated in the returned shape instead (the computation
    writes it through the inverse reshape); every other such result gets a
    copy in a fresh allocation. So every result can become the caller's
    output buffer, computed in place (buffer-results-to-out-params with
    hoisted allocations).
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def BF16Matmuls : Pass<"sinter-bf16-matmuls", "mlir::ModuleOp"> {
  let summary = "Rounds the inputs of every matmul to bf16 (compute: BF16)";
  let description = [{
    With `precision { compute: BF16 }` (the module's `sinter.compute` is
    "bf16"), every f32 `linalg.matmul` and `linalg.batch_matmul` on tensors,
    in the forward pass and in the gradients alike, reads its two inputs
    rounded to bf16 (to nearest, ties to even) and sums their products in
    f32 into its f32 result: the library's bf16 matmul. Everything else
    stays f32: parameters and optimizer moments, norms, softmax, the loss,
    reductions and the gradient sums over ranks. A value read by several
    matmuls is rounded once, next to its definition; a private function's
    argument that only matmuls read becomes bf16 and is rounded by its
    callers, so a layer's weight is rounded once per step in the step, not
    in each call of the layer's forward and backward functions. Convolutions
    stay f32.
    Run it once the matmuls' forms are settled (transposes folded, gradients
    accumulated into them), before bufferization. With compute F32, or no
    `sinter.compute`, the pass changes nothing.
  }];
  let options = [
    Option<"compute", "compute", "std::string", /*default=*/"\"\"",
           "f32 or bf16; default: the module's sinter.compute (f32 without it)">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

#endif // SINTER_TRANSFORMS_PASSES_TD
