//===- TrainOps.td - The Sinter train dialect's ops --------*- tablegen -*-===//
#ifndef SINTER_TRAIN_OPS_TD
#define SINTER_TRAIN_OPS_TD

include "dialects/Train/IR/TrainDialect.td"
include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Train_Op<string mnemonic, list<Trait> traits = []>
    : Op<Train_Dialect, mnemonic, traits>;

def Train_FloatScalar : TensorRankOf<[AnyFloat], [0]>;

//===----------------------------------------------------------------------===//
// The loss over the global batch (graph level)
//===----------------------------------------------------------------------===//

def Train_SampleFractionOp : Train_Op<"sample_fraction", [Pure]> {
  let summary = "The share of the global batch one micro-batch holds";
  let description = [{
    `b / G`: the micro-batch size over the global batch size (micro-batches
    times ranks times `b`). A mean over the samples of a micro-batch scaled
    by it adds up, over all micro-batches of a step, to the mean over the
    global batch.

    Example: `%f = train.sample_fraction : tensor<f32>`
  }];
  let results = (outs Train_FloatScalar:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Train_GlobalCountOp : Train_Op<"global_count", [Pure]> {
  let summary = "How many elements of a mask are true over the global batch";
  let description = [{
    The number of true elements of `mask` summed over every micro-batch of
    the step (and every rank), as a float. `mask` must be computed from the
    step's inputs alone (for a token mean, `target != ignore_index`), so the
    count is known before the first micro-batch's forward pass.

    Example:
    ```mlir
    %n = train.global_count %valid : (tensor<8x32xi1>) -> tensor<f32>
    ```
  }];
  let arguments = (ins TensorOf<[I1]>:$mask);
  let results = (outs Train_FloatScalar:$result);
  let assemblyFormat = "$mask attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// The micro-batch loop (tensor and buffer level)
//===----------------------------------------------------------------------===//

def Train_MicroBatchCountOp : Train_Op<"micro_batch_count", [Pure]> {
  let summary = "The number of micro-batches of this rank in a step";
  let description = [{
    k = global batch / (micro-batch × world size), known at run time only.

    Example: `%k = train.micro_batch_count : index`
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Train_GlobalBatchOp : Train_Op<"global_batch", [Pure]> {
  let summary = "The number of samples of a step over all ranks";
  let description = [{
    Example: `%g = train.global_batch : index`
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Train_MicroBatchIndexOp : Train_Op<"micro_batch_index", [Pure]> {
  let summary = "The index of the micro-batch being computed";
  let description = [{
    Stands for the loop's induction variable in code built before the loop
    exists (a dropout's random key); `train-accumulate` replaces it.

    Example: `%i = train.micro_batch_index : index`
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Train_RandomKeyOp : Train_Op<"random_key", [Pure]> {
  let summary = "The random key of one micro-batch of this step";
  let description = [{
    A 64-bit key that depends only on the run's seed, the step, the
    micro-batch and the rank: a resumed run draws what an uninterrupted one
    would have drawn.

    Example: `%key = train.random_key %i : i64`
  }];
  let arguments = (ins Index:$micro_batch);
  let results = (outs I64:$result);
  let assemblyFormat = "$micro_batch attr-dict `:` type($result)";
}

def Train_SumOverRanksOp : Train_Op<"sum_over_ranks"> {
  let summary = "The sum of a count over every rank of the run";
  let description = [{
    A collective: every rank must reach it, in the same order. Used for the
    global count of valid targets, before the first micro-batch.

    Example: `%all = train.sum_over_ranks %mine : i64`
  }];
  let arguments = (ins I64:$value);
  let results = (outs I64:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
}

def Train_AllReduceSumOp : Train_Op<"all_reduce_sum", [
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "getAliasingValues", "bufferize"]>]> {
  let summary = "Sums a tensor over the ranks, now";
  let description = [{
    A collective that completes before the op returns (synchronized
    batch-norm statistics). On a tensor it returns the sum, computed in
    place; on a buffer it has no result.

    Example: `%s = train.all_reduce_sum %t : tensor<16xf32> -> tensor<16xf32>`
  }];
  let arguments = (ins AnyShaped:$input);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) (`->` type($result)^)?";
}

def Train_RankOp : Train_Op<"rank", [Pure]> {
  let summary = "This process's rank in the run";
  let description = [{
    In [0, world size). A sharded step reads it to find its own shard.

    Example: `%r = train.rank`
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict";
}

def Train_AllGatherOp : Train_Op<"all_gather", [
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "getAliasingValues", "bufferize"]>]> {
  let summary = "Every rank's shard, row by row, now";
  let description = [{
    A collective that completes before the op returns: row r of `dest`
    (world size rows, one shard each) becomes rank r's `shard`. Every rank
    must reach it, in the same order. On tensors it returns `dest` written
    in place; on buffers it has no result.

    Example:
    ```mlir
    %all = train.all_gather %mine into %rows
        : tensor<96xf32> into tensor<2x96xf32> -> tensor<2x96xf32>
    ```
  }];
  let arguments = (ins AnyShaped:$shard, AnyShaped:$dest);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $shard `into` $dest attr-dict `:` type($shard) `into` type($dest)
    (`->` type($result)^)?
  }];
  let hasVerifier = 1;
}

def Train_AllGatherStartOp : Train_Op<"all_gather_start", [
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "bufferizesToAllocation", "getAliasingValues", "bufferize"]>]> {
  let summary = "Starts gathering every rank's shard, row by row";
  let description = [{
    A collective that returns at once: row r of the result becomes rank r's
    `shard`. The rows are there only after the `train.collective_wait` of
    the same `id`, whose `keep` is the shard: it must stay alive and
    unchanged until then. Every rank must start the same collectives in the
    same order. On tensors it returns the rows, in a new buffer; on buffers
    it writes `into`.

    Example:
    ```mlir
    %rows = train.all_gather_start 7, %mine : tensor<96xf32> -> tensor<2x96xf32>
    ```
  }];
  let arguments = (ins I64Attr:$id, AnyShaped:$shard, Optional<AnyMemRef>:$rows);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $id `,` $shard (`into` $rows^)? attr-dict `:` type($shard)
    (`into` type($rows)^)? (`->` type($result)^)?
  }];
  let hasVerifier = 1;
}

def Train_ReduceScatterStartOp : Train_Op<"reduce_scatter_start", [
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "bufferizesToAllocation", "getAliasingValues", "bufferize"]>]> {
  let summary = "Starts summing rows over the ranks, each rank keeping its own";
  let description = [{
    A collective that returns at once: `shard` becomes the sum over the
    ranks of row r of `rows`, on rank r. Its value is there only after the
    `train.collective_wait` of the same `id`. `rows` is the collective's
    scratch: it must stay alive until the wait, and nothing reads it after
    this op (the wait's `keep` only holds it). Every rank must start the same
    collectives in the same order.
    On tensors it returns the shard, in a new buffer; on buffers it writes
    `shard`.

    Example:
    ```mlir
    %s = train.reduce_scatter_start 3, %rows : tensor<2x96xf32> -> tensor<96xf32>
    ```
  }];
  let arguments = (ins I64Attr:$id, AnyShaped:$rows, Optional<AnyMemRef>:$shard);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $id `,` $rows (`into` $shard^)? attr-dict `:` type($rows)
    (`into` type($shard)^)? (`->` type($result)^)?
  }];
  let hasVerifier = 1;
}

def Train_CollectiveWaitOp : Train_Op<"collective_wait", [
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "getAliasingValues", "bufferize"]>]> {
  let summary = "Waits for a started collective";
  let description = [{
    The collective `id` (a `train.reduce_scatter_start` or
    `train.all_gather_start`) is done: returns
    its `result`, now valid. `keep` (its input) is read here only so that
    it stays alive and untouched until the wait. On buffers it has no
    results.

    Example:
    ```mlir
    %done = train.collective_wait 3, %s keep %rows
        : tensor<96xf32>, tensor<2x96xf32> -> tensor<96xf32>
    ```
  }];
  let arguments = (ins I64Attr:$id, AnyShaped:$value, AnyShaped:$keep);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $id `,` $value `keep` $keep attr-dict `:` type($value) `,` type($keep)
    (`->` type($result)^)?
  }];
}

class Train_ConvLibraryOp<string mnemonic, string summaryText,
                          dag extraArguments = (ins)>
    : Train_Op<mnemonic, [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "bufferizesToAllocation", "getAliasingValues", "bufferize"]>]> {
  let summary = summaryText;
  let arguments = !con((ins AnyShaped:$lhs, AnyShaped:$rhs,
                   Optional<AnyShaped>:$into, DenseI64ArrayAttr:$stride,
                   DenseI64ArrayAttr:$padding, DenseI64ArrayAttr:$dilation,
                   UnitAttr:$channels_last, DefaultValuedAttr<I64Attr, "1">:$groups),
                   extraArguments);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`into` $into^)? attr-dict `:` type($lhs) `,` type($rhs)
    (`into` type($into)^)? (`->` type($result)^)?
  }];
  let hasVerifier = 1;
}

def Train_ConvForwardOp : Train_ConvLibraryOp<"conv2d_forward",
    "A convolution with zero padding, for the device's library"> {
  let description = [{
    y = conv2d(x, w): the input `lhs` (NCHW, not padded) by the kernel `rhs`
    (OIHW) with the given stride, zero padding on both sides of each spatial
    axis, and dilation. With `groups` (CPU only), the channels split into
    that many groups, each convolved with its own `O / groups` kernels of
    `C / groups` channels (the kernel `[O, C / groups, KH, KW]`; likewise in
    the two backward ops). With `channels_last` (CPU only), x and y are
    NHWC, and so are the activations and their gradients of the two
    backward ops. The CPU target lowers it to oneDNN's forward convolution,
    the CUDA target to cuDNN's; both read the padding as zeros instead of a
    padded copy of x. On tensors it returns y, in a new buffer; on buffers
    it writes `into`.

    Example:
    ```mlir
    %y = train.conv2d_forward %x, %w {stride = array<i64: 1, 1>,
        padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
        : tensor<2x3x4x4xf32>, tensor<8x3x3x3xf32> -> tensor<2x8x4x4xf32>
    ```
  }];
}

def Train_ConvBackwardDataOp : Train_ConvLibraryOp<"conv2d_backward_data",
    "The gradient of a convolution's input, for the device's library"> {
  let description = [{
    dx = the gradient of conv2d(x, w) (NCHW input, OIHW kernel, the given
    stride, zero padding and dilation) with respect to x, from the output's
    gradient `lhs` and the kernel `rhs`. The CPU target lowers it to oneDNN's
    backward-data convolution, the CUDA target to cuDNN's. On tensors it returns dx, in a new buffer; on
    buffers it writes `into`.

    Example:
    ```mlir
    %dx = train.conv2d_backward_data %dy, %w {stride = array<i64: 1, 1>,
        padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
        : tensor<2x8x4x4xf32>, tensor<8x3x3x3xf32> -> tensor<2x3x4x4xf32>
    ```
  }];
}

def Train_ConvBackwardWeightsOp : Train_ConvLibraryOp<"conv2d_backward_weights",
    "The gradient of a convolution's kernel, for the device's library",
    (ins UnitAttr:$accumulate)> {
  let description = [{
    dw = the gradient of conv2d(x, w) with respect to w, from the input `lhs`
    and the output's gradient `rhs` (as `train.conv2d_backward_data`). The
    CPU target lowers it to oneDNN's backward-weights convolution, the CUDA
    target to cuDNN's backward-filter convolution.

    With `accumulate` (CPU only), dw is added to `into`, a weight's
    gradient accumulator: on tensors the result is `into` plus dw, made in
    `into`'s buffer; on buffers the call adds dw into `into`. A weight
    gradient then needs no buffer of its own and no pass that adds it.

    Example:
    ```mlir
    %acc2 = train.conv2d_backward_weights %x, %dy into %acc {accumulate,
        stride = array<i64: 1, 1>, padding = array<i64: 1, 1>,
        dilation = array<i64: 1, 1>}
        : tensor<2x3x4x4xf32>, tensor<2x8x4x4xf32> into tensor<8x3x3x3xf32>
        -> tensor<8x3x3x3xf32>
    ```
  }];
}

/// A device library's call on tensors (inputs read, new results) or on
/// buffers (inputs read, `into` written), with its own attributes.
class Train_VariadicLibraryOp<string mnemonic, string summaryText, dag attributes>
    : Train_Op<mnemonic, [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "bufferizesToAllocation", "getAliasingValues", "bufferize"]>]> {
  let summary = summaryText;
  let arguments = !con((ins Variadic<AnyShaped>:$inputs, Variadic<AnyMemRef>:$into),
                       attributes);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $inputs (`into` $into^)? attr-dict `:` type($inputs) (`into` type($into)^)?
    (`->` type($results)^)?
  }];
  let hasVerifier = 1;
}

class Train_AttentionLibraryOp<string mnemonic, string summaryText>
    : Train_VariadicLibraryOp<mnemonic, summaryText, (ins BoolAttr:$causal)>;

class Train_BatchNormLibraryOp<string mnemonic, string summaryText>
    : Train_VariadicLibraryOp<mnemonic, summaryText, (ins F64Attr:$epsilon)>;

def Train_AttentionForwardOp : Train_AttentionLibraryOp<"attention_forward",
    "Scaled dot-product attention, for the device's fused kernel"> {
  let description = [{
    `softmax(q k^T / sqrt(D)) v` of `q` [..., Tq, D], `k` [..., Tk, D] and
    `v` [..., Tk, Dv], causally masked (key after query) when `causal`: the
    CUDA target's call of cuDNN's fused attention (bf16), or of Sinter's own
    fused kernels (f32: one shape for all three, D 32 or 64). On tensors it
    returns the result; on buffers it writes `into`.

    Example:
    ```mlir
    %o = train.attention_forward %q, %k, %v {causal = true}
        : tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>
        -> tensor<2x4x64x16xbf16>
    ```
  }];
}

def Train_AttentionBackwardOp : Train_AttentionLibraryOp<"attention_backward",
    "The gradients of scaled dot-product attention, for the device's kernel"> {
  let description = [{
    The gradients of `q`, `k` and `v` (bf16 or f32, as
    `train.attention_forward`) for the result's gradient `grad`: the fused
    attention's backward pass, after it recomputes the forward pass's output
    and row statistics.
  }];
}

class Train_PackedAttentionLibraryOp<string mnemonic, string summaryText>
    : Train_VariadicLibraryOp<mnemonic, summaryText,
                              (ins I64Attr:$heads, BoolAttr:$causal)>;

def Train_AttentionQkvForwardOp : Train_PackedAttentionLibraryOp<
    "attention_qkv_forward",
    "Self-attention over one packed projection, for the device's fused kernel"> {
  let description = [{
    `graph.attention_qkv` of a bf16 or f32 `qkv` [B, T, 3C] (q, k and v side
    by side, each of `heads` heads of C / heads; in f32 heads of 32 or 64):
    the result [B, T, C] of its type,
    each head in its columns, and, when asked for (a second result), each
    query's f32 log-sum-exp of its scaled scores [B, heads, T] for the
    backward op. The CUDA target's call of cuDNN's fused attention (bf16) or
    Sinter's own (f32), which read and write these layouts through strides.
    On tensors it returns
    its results; on buffers it writes `into`.

    Example:
    ```mlir
    %y, %lse = train.attention_qkv_forward %qkv {heads = 4 : i64, causal = true}
        : tensor<2x64x192xbf16> -> tensor<2x64x64xbf16>, tensor<2x4x64xf32>
    ```
  }];
}

def Train_AttentionQkvBackwardOp : Train_PackedAttentionLibraryOp<
    "attention_qkv_backward",
    "The gradient of self-attention over a packed projection, for the device's kernel"> {
  let description = [{
    From `qkv`, the forward op's result and statistics and the result's
    gradient ([B, T, C], of qkv's type): the gradient of `qkv` [B, T, 3C],
    in its layout. The fused attention's backward pass, with the statistics
    the forward pass kept.
  }];
}

def Train_BatchNormForwardOp : Train_BatchNormLibraryOp<"batch_norm_forward",
    "Batch normalization with the batch's statistics, for the device's library"> {
  let description = [{
    `y = (x - mean) * invstd * weight + bias` per channel (axis 1) of f32 `x`
    `[N, C, ...]`, with the batch's `mean` over every other axis and
    `invstd = 1 / sqrt(var + epsilon)` of its biased variance, which it also
    returns (`weight`, `bias`, `mean` and `invstd` are `[C]`): the CUDA
    target's call of cuDNN's batch-norm. On tensors it returns `y`, `mean`
    and `invstd`; on buffers it writes `into`.

    Example:
    ```mlir
    %y, %mean, %invstd = train.batch_norm_forward %x, %w, %b {epsilon = 1.0e-05 : f64}
        : tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>
        -> tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>
    ```
  }];
}

def Train_BatchNormBackwardOp : Train_BatchNormLibraryOp<"batch_norm_backward",
    "The gradients of batch normalization, for the device's library"> {
  let description = [{
    From `x`, the result's gradient `dy`, `weight` and the `mean` and
    `invstd` that `train.batch_norm_forward` gave: the gradients of `x`
    (through the statistics too), `weight` and `bias`.
  }];
}

class Train_PoolLibraryOp<string mnemonic, string summaryText>
    : Train_VariadicLibraryOp<mnemonic, summaryText,
        (ins DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$stride,
             DenseI64ArrayAttr:$padding, BoolAttr:$max, UnitAttr:$channels_last)>;

def Train_Pool2dForwardOp : Train_PoolLibraryOp<"pool2d_forward",
    "Max or average pooling, for the device's library"> {
  let description = [{
    `graph.max_pool2d` (with `max`) or `graph.avg_pool2d` of the f32 `x`
    (NCHW, or NHWC with `channels_last`), with the given (height, width)
    kernel, stride and symmetric padding: padded positions never win a
    maximum and count as zeros in an average. The CPU target's call of
    oneDNN's pooling. On tensors it returns the result; on buffers it writes
    `into`.

    Example:
    ```mlir
    %y = train.pool2d_forward %x {kernel = array<i64: 2, 2>,
        stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, max = true}
        : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
    ```
  }];
}

def Train_Pool2dBackwardOp : Train_PoolLibraryOp<"pool2d_backward",
    "The gradient of a pooling, for the device's library"> {
  let description = [{
    From the pooling's input `x` and its result's gradient `dy`, the
    gradient of `x` (as `graph.pool2d_grad`: a window's gradient goes to its
    first maximum in row-major order, or is shared by the whole window). The
    CPU's call finds the maxima again from `x`.
  }];
}

def Train_MicroBatchInputOp : Train_Op<"micro_batch_input", [
    AllTypesMatch<["dest", "result"]>,
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "getAliasingValues", "bufferize"]>]> {
  let summary = "One micro-batch of an input, loaded into its buffer";
  let description = [{
    The micro-batch `micro_batch` of the input `name`, written in place into
    `dest` (the input's buffer, carried through the micro-batch loop), so a
    step reads each micro-batch without a copy of the whole local batch.

    Example:
    ```mlir
    %x = train.micro_batch_input "x" %buf[%i] : tensor<32x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$dest, Index:$micro_batch,
                       StrAttr:$name);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $name $dest `[` $micro_batch `]` attr-dict `:` type($result)
  }];
}

def Train_LoadInputOp : Train_Op<"load_input"> {
  let summary = "Fills an input's buffer with one micro-batch";
  let description = [{
    The buffer form of `train.micro_batch_input`.

    Example: `train.load_input "x" %buf[%i] : memref<32x64xf32>`
  }];
  let arguments = (ins Arg<AnyMemRef, "", [MemWrite]>:$buffer,
                       Index:$micro_batch, StrAttr:$name);
  let assemblyFormat = [{
    $name $buffer `[` $micro_batch `]` attr-dict `:` type($buffer)
  }];
}

def Train_BucketReadyOp : Train_Op<"bucket_ready", [
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "getAliasingValues", "bufferize"]>]> {
  let summary = "A gradient bucket is final: its collective may start";
  let description = [{
    The gradients of bucket `bucket` (the plan's bucket layout, in order)
    have their final values for this step; the runtime starts summing the
    bucket over the ranks and returns at once, so the collective overlaps
    the rest of the backward pass. The buffers must not be touched again
    before `train.gradients_ready`, which waits for every bucket. On tensors
    the op returns its operands (updated in place); on buffers it has no
    results.

    Example:
    ```mlir
    %g:2 = train.bucket_ready 0 (%gw, %gb) : tensor<4x3xf32>, tensor<4xf32>
        -> tensor<4x3xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins I64Attr:$bucket, Variadic<AnyShaped>:$gradients);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $bucket `(` $gradients `)` attr-dict `:` type($gradients)
    (`->` type($results)^)?
  }];
  let hasVerifier = 1;
}

def Train_GradientsReadyOp : Train_Op<"gradients_ready"> {
  let summary = "Every gradient of the step is final";
  let description = [{
    Placed after the last micro-batch: gradient communication finishes here
    (it starts here, or earlier at each `train.bucket_ready`), never inside
    the earlier micro-batches. It may read and write any memory, so no
    access moves across it.

    Example: `train.gradients_ready`
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// The update (tensor level, after the gradients are final)
//===----------------------------------------------------------------------===//

def Train_HyperparameterOp : Train_Op<"hyperparameter", [Pure]> {
  let summary = "A scalar of this step's update, given by the runtime";
  let description = [{
    The runtime computes the learning-rate schedule and holds the config, so
    the step reads the update's scalars from it (abi.h's
    `sinter_rt_hyperparameter`): `lr` (this step's rate, scheduled and
    scaled), `step` (the number of this update, 1 for the first),
    `weight_decay` and `weight_decay_1d` (for parameters of one dimension),
    `beta1`, `beta2`, `eps`, `momentum`, `nesterov` (0 or 1),
    `max_grad_norm` (0: no clipping) and `apply` (0 when the runtime wants
    the gradients only). Changing them needs no recompiling.

    Example: `%lr = train.hyperparameter "lr" : f64`
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs F64:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The names the runtime answers, in abi.h's order.
    static llvm::ArrayRef<llvm::StringRef> knownNames();
  }];
}

def Train_GlobalNormOp : Train_Op<"global_norm", [Pure]> {
  let summary = "The L2 norm of all gradients together";
  let description = [{
    sqrt of the sum of the squares of every element of every operand,
    accumulated in f64 (f32 squares of a large model overflow and round
    away). It is not finite when an element is not.

    Example:
    ```mlir
    %n = train.global_norm %gw, %gb : tensor<4x3xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$gradients);
  let results = (outs F64:$result);
  let assemblyFormat = "$gradients attr-dict `:` type($gradients)";
}

def Train_AdamWUpdateOp : Train_Op<"adamw_update", [Pure,
    AllTypesMatch<["param", "grad", "exp_avg", "exp_avg_sq", "new_param",
                   "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "One AdamW update of a parameter and its moments";
  let description = [{
    PyTorch's `torch.optim.AdamW`, elementwise, with the gradient scaled
    by `grad_scale` first (clipping):
    ```
    g = grad * grad_scale
    p = param * (1 - lr * weight_decay)
    m = exp_avg + (1 - beta1) * (g - exp_avg)
    v = exp_avg_sq * beta2 + (1 - beta2) * g * g
    new_param = p - lr / (1 - beta1^step) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps)
    ```
    The scalars are f64 and rounded to the parameter's type once.

    Example:
    ```mlir
    %p2, %m2, %v2 = train.adamw_update %p, %g, %m, %v lr(%lr)
        weight_decay(%wd) betas(%b1, %b2) eps(%eps) step(%t)
        grad_scale(%s) : tensor<4x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$param, AnyRankedTensor:$grad,
                       AnyRankedTensor:$exp_avg, AnyRankedTensor:$exp_avg_sq,
                       F64:$lr, F64:$weight_decay, F64:$beta1, F64:$beta2,
                       F64:$eps, F64:$step, F64:$grad_scale);
  let results = (outs AnyRankedTensor:$new_param, AnyRankedTensor:$new_exp_avg,
                      AnyRankedTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `lr` `(` $lr `)`
    `weight_decay` `(` $weight_decay `)` `betas` `(` $beta1 `,` $beta2 `)`
    `eps` `(` $eps `)` `step` `(` $step `)` `grad_scale` `(` $grad_scale `)`
    attr-dict `:` type($param)
  }];
}

def Train_SGDUpdateOp : Train_Op<"sgd_update", [Pure,
    AllTypesMatch<["param", "grad"]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "One SGD update of a parameter, with or without momentum";
  let description = [{
    PyTorch's `torch.optim.SGD` (no dampening), elementwise:
    ```
    d = grad * grad_scale + weight_decay * param
    b = momentum * momentum_buffer + d        (with a momentum buffer)
    d = nesterov != 0 ? d + momentum * b : b   (with a momentum buffer)
    new_param = param - lr * d
    ```
    A momentum buffer starts at zero, so its first value is the first
    gradient, as in PyTorch. Without a buffer the op has one result.

    Example:
    ```mlir
    %p2, %b2 = train.sgd_update %p, %g momentum_buffer(%b : tensor<4x3xf32>) lr(%lr)
        weight_decay(%wd) momentum(%mu) nesterov(%n) grad_scale(%s)
        : tensor<4x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$param, AnyRankedTensor:$grad,
                       Optional<AnyRankedTensor>:$momentum_buffer,
                       F64:$lr, F64:$weight_decay, F64:$momentum,
                       F64:$nesterov, F64:$grad_scale);
  let results = (outs AnyRankedTensor:$new_param,
                      Optional<AnyRankedTensor>:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad
    (`momentum_buffer` `(` $momentum_buffer^ `:` type($momentum_buffer) `)`)?
    `lr` `(` $lr `)` `weight_decay` `(` $weight_decay `)`
    `momentum` `(` $momentum `)` `nesterov` `(` $nesterov `)`
    `grad_scale` `(` $grad_scale `)` attr-dict `:` type($param)
  }];
  let hasVerifier = 1;
}

#endif // SINTER_TRAIN_OPS_TD
