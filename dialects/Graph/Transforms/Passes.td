//===- Passes.td - Passes over the graph dialect -----------*- tablegen -*-===//
#ifndef SINTER_GRAPH_PASSES_TD
#define SINTER_GRAPH_PASSES_TD

include "mlir/Pass/PassBase.td"

def GraphModelToFunc : Pass<"graph-model-to-func", "mlir::ModuleOp"> {
  let summary = "Turns each graph.model into a function of its inputs, "
                "params and states";
  let description = [{
    Each `graph.model @name` becomes `func.func @name`. Its arguments are the
    model's `graph.input`, `graph.param` and `graph.state` values in
    declaration order, each tagged with `sinter.input`, `sinter.param` or
    `sinter.state` and its name (params and states keep `sinter.init` and
    `sinter.init_args`, which the runtime needs to initialise them). Its
    results are the loss (`sinter.loss`), the metrics (`sinter.metric`), the
    outputs (`sinter.output`) and the new values of the updated states
    (`sinter.state`), in that order.
    The phase is kept as `sinter.phase`. Compute ops are moved unchanged.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def GraphAutodiff : Pass<"graph-autodiff", "mlir::ModuleOp"> {
  let summary = "Reverse-mode gradients of the loss for every parameter";
  let description = [{
    In each `graph.model` of phase "train" with a `graph.loss`, builds the
    gradient of the loss with respect to every `graph.param` that the loss
    depends on, by reverse accumulation through each op's
    `GradientOpInterface`, and records it with `graph.gradient "name"`.
    Only ops on a path from a parameter to the loss are differentiated;
    integer inputs, targets and states get no gradient. Backward ops carry
    the location of the forward op they come from. An op on such a path
    without a gradient is an error at that op.

    A call of a repeated block (`func.call` of a `sinter.block` function)
    is differentiated once per block: the block becomes `@F.fwd`, which
    returns its results and the activations its backward pass reads, and
    `@F.bwd`, which takes the call's arguments and forward results it needs
    with the gradients of the results that reach the loss, and returns the
    gradients of the arguments. Every call becomes a call of `@F.fwd`, and
    the sweep calls `@F.bwd` in reverse order. Reshapes, transposes, slices
    and constants are computed again in `@F.bwd` rather than saved.

    A block marked `sinter.recompute` (config `recompute.mode`) keeps less:
    "selective" saves only the outputs of matmuls, convolutions and
    attention, and `@F.bwd` computes the ops between them again; "full"
    saves only the call's arguments, and `@F.bwd` runs the block's forward
    ops again before its gradients. Either way the block's results and its
    sums across ranks are read from the forward call, never recomputed.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def GraphFuseAttention : Pass<"graph-fuse-attention", "mlir::ModuleOp"> {
  let summary = "Spelled-out scaled dot-product attention as graph.attention";
  let description = [{
    `softmax(q @ transpose(k) * c) @ v`, with `c` = 1 / sqrt(D) (or the
    scores divided by sqrt(D)), D the last dimension of `q`, becomes
    `graph.attention %q, %k, %v`, so that a target lowers it whole. A
    `where(mask, fill, scores)` before the softmax makes it causal when the
    mask, computed from constants and aranges, is true exactly where the
    key comes after the query, and `fill` is -inf or at most -1e9. The ops
    it replaces stay for their other users and die otherwise.
  }];
}

def GraphPackAttention : Pass<"graph-pack-attention", "mlir::ModuleOp"> {
  let summary = "Attention over one packed projection as graph.attention_qkv";
  let description = [{
    Where the device's library attends (`sinter.device` "cuda": cuDNN with
    compute bf16; in f32, Sinter's own fused kernels, for head sizes 32 and
    64): a `graph.attention` whose query, key and value are the three
    `C`-wide column blocks of one `[B, T, 3C]` tensor, each reshaped to `[B,
    T, heads, C / heads]` and transposed to `[B, heads, T, C / heads]`,
    becomes `graph.attention_qkv` of that tensor. Its result is already
    `[B, T, C]`: a user that transposes the heads back and reshapes takes it
    as it is. cuDNN then reads q, k and v where the projection wrote them and
    writes the output and the gradients in the layouts the matmuls around
    it take, with no transposed copies, and the backward pass reads the
    forward pass's row statistics. Ops left without users are erased.
  }];
}

def GraphRoundResiduals : Pass<"graph-round-residuals", "mlir::ModuleOp"> {
  let summary = "A layer's residual stream rounded to bf16 (precision.residual)";
  let description = [{
    When the module's `sinter.residual` is "bf16", in and around repeated
    blocks (`sinter.block`: a model's layers): an f32 activation a block's
    call takes is passed rounded to bf16 (the embeddings' sum entering the
    first layer; a block's result that is rounded already is not rounded
    again), and inside a block each f32 `graph.add` of the stream (an
    activation argument, or a sum rounded before it) and another activation
    of its shape is read rounded, and carries the stream on (x + attention,
    then that + mlp). Rounding is a cast to bf16 and back, so autodiff
    rounds the gradients flowing back through those points too. A value is
    an activation unless parameters, states and constants alone make it.
    Run before autodiff; the passes that narrow widened values then store
    the tensors in bf16.
  }];
}

def GraphFuseBatchNorm : Pass<"graph-fuse-batch-norm", "mlir::ModuleOp"> {
  let summary = "Spelled-out training batch-norm as graph.batch_norm, for CUDA";
  let description = [{
    In a module compiled for CUDA (`sinter.device` "cuda"), where cuDNN
    normalizes a batch whole: `(x - reshape(mean)) * reshape(scale) +
    reshape(bias)`, with `mean` and `var` the `graph.batch_norm_stats` of
    `x` (static f32, at least two values per channel) over every axis but 1,
    `scale` = `weight * rsqrt(var + eps)` or `rsqrt(var + eps)` and the bias
    optional, becomes `graph.batch_norm %x, %weight, %bias {epsilon}`. The
    statistics' other readers read the fused op's; the spelled-out ops die.
    Elsewhere it changes nothing.
  }];
}

def GraphChannelsLast : Pass<"graph-channels-last", "mlir::ModuleOp"> {
  let summary = "NHWC activations between a CPU module's convolutions";
  let description = [{
    In a module compiled for the CPU (`sinter.device` "cpu"), each f32
    `graph.conv2d` (grouped too) becomes a `channels_last` one (NHWC input
    and result, OIHW weight) between transposes, and the transposes back to
    NCHW move down through elementwise ops of rank-4 and scalar operands
    (the others transposed to match; a per-channel `[1, C, 1, 1]` view
    becomes `[1, 1, 1, C]`), through `graph.batch_norm_stats` and
    `graph.batch_norm_count` over N, H and W (axes renumbered), through f32
    `graph.max_pool2d`, `graph.avg_pool2d` and `graph.global_avg_pool2d`
    (made `channels_last`: the CPU's library pools NHWC as it is), and across
    the arguments and results of private functions that only calls use (the
    repeated blocks), until they meet their inverses and fold away. What
    reads a value in NCHW otherwise reads a transpose. It runs before
    autodiff, which keeps the layout in the gradients. Elsewhere it changes
    nothing.
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

def GraphFactorSums : Pass<"graph-factor-sums", "mlir::ModuleOp"> {
  let summary = "Factors constant along a sum's axes are taken out of it";
  let description = [{
    After autodiff, whose gradients of broadcasting ops sum over the
    broadcast axes. A floating-point `graph.reduce_sum` of `graph.neg %x`
    becomes the negated sum of `%x`, and one with keepdim of `%x * %s`,
    where `%s` has size 1 along every summed axis and `%x` the product's
    shape, becomes the sum of `%x` times `%s`. Batch-norm's gradient of its
    mean, `sum(-(g * scale))` per channel, becomes `-(sum(g) * scale)`: the
    sum of `g` its bias already takes (equal sums in a block are merged), and the
    product `g * scale`, no longer read by a sum, fuses into the one map
    that still reads it. Equal in real arithmetic; the factored form rounds
    the product once per channel instead of once per element.
  }];
}

def GraphExpandAttentionGrad : Pass<"graph-expand-attention-grad", "mlir::ModuleOp"> {
  let summary = "graph.attention_grad as graph ops, unless the target fuses it";
  let description = [{
    Each `graph.attention_grad` becomes the gradients spelled out in graph
    ops (the probabilities recomputed from q and k), except where the
    device's fused attention differentiates attention itself, static shapes
    only, in a module compiled for CUDA (`sinter.device` "cuda"): cuDNN's
    with compute: BF16 (`sinter.compute` "bf16"; head sizes a multiple of 8
    up to 128), Sinter's own kernels in f32 (self-attention, head sizes 32
    and 64).
  }];
}

#endif // SINTER_GRAPH_PASSES_TD
