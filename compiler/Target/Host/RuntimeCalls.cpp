//===- RuntimeCalls.cpp - train ops to calls of the runtime's C ABI -------===//
//
// What a train step needs from the world while it runs (the micro-batch
// count, the inputs of each micro-batch, random keys, the point where
// gradients are final) becomes a call of the matching abi.h function.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/CallBuilder.h"
#include "compiler/Target/Host/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"
#include "dialects/Train/IR/TrainOps.h"
#include "runtime/contract/AbiNames.h"
#include "runtime/contract/abi.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"

#include <optional>
#include <type_traits>

using namespace mlir;
using namespace sinter::train;

namespace sinter::host {
#define GEN_PASS_DEF_RUNTIMECALLS
#include "compiler/Target/Host/Passes.h.inc"

namespace {

/// Marks the allocation behind `buffer` (through its views) as a buffer of
/// a collective, for the memory report; a step argument stays unmarked.
void markCommunication(Value buffer) {
  while (Operation *def = buffer.getDefiningOp()) {
    if (isa<memref::AllocOp>(def)) {
      attrs::communication.set(def, UnitAttr::get(def->getContext()));
      return;
    }
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return;
    buffer = view.getViewSource();
  }
}

/// A convolution or its gradient as the device library's call: its three buffers in
/// the order the op takes them (the result last), then the shapes of the
/// convolution's input x[n, c, h, w], kernel [o, c, kh, kw] and output
/// [n, o, oh, ow], and its strides, dilations and paddings.
template <typename OpT>
LogicalResult callConv(CallBuilder &cb, OpT op, StringRef callee, Value input, Value grad,
                       Value weight) {
  if (callee.empty())
    return op.emitError("internal error: the device's library has no such convolution");
  for (Value v : {input, grad, weight}) {
    auto t = cast<MemRefType>(v.getType());
    if (!t.getElementType().isF32() || !t.getLayout().isIdentity())
      return op.emitError("the library's convolutions need dense f32 "
                          "buffers, not ")
             << t;
  }
  SmallVector<int64_t> x(cast<MemRefType>(input.getType()).getShape()),
      y(cast<MemRefType>(grad.getType()).getShape());
  ArrayRef<int64_t> w = cast<MemRefType>(weight.getType()).getShape();
  // The call takes NCHW sizes whatever the layout.
  if (op.getChannelsLast()) {
    x = {x[0], x[3], x[1], x[2]};
    y = {y[0], y[3], y[1], y[2]};
  }
  Location loc = op.getLoc();
  SmallVector<Value> args = {cb.pointer(op.getLhs()), cb.pointer(op.getRhs()),
                             cb.pointer(op.getInto())};
  ArrayRef<int64_t> s = op.getStride(), d = op.getDilation(), p = op.getPadding();
  for (int64_t v : {x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3], s[0], s[1],
                    d[0], d[1], p[0], p[1]})
    args.push_back(cb.constant(loc, v));
  if (op.getGroups() != 1)
    args.push_back(cb.constant(loc, op.getGroups()));
  cb.libraryCall(loc, callee, args);
  return success();
}

/// A convolution pass's library function: conv2d_[grouped_][nhwc_]PASS
/// (the grouped ones take the number of groups last).
template <typename OpT> std::string convCall(OpT op, StringRef pass) {
  return ("conv2d_" + Twine(op.getGroups() != 1 ? "grouped_" : "") +
          Twine(op.getChannelsLast() ? "nhwc_" : "") + pass)
      .str();
}

/// The pointers of a variadic library call's buffers (inputs, then
/// results), which must be dense and static, of type `element`.
FailureOr<SmallVector<Value>> densePointers(CallBuilder &cb, Operation *op,
                                            ValueRange inputs, ValueRange into,
                                            StringRef what, Type element) {
  SmallVector<Value> pointers;
  for (Value v : llvm::concat<const Value>(inputs, into)) {
    auto t = cast<MemRefType>(v.getType());
    if (t.getElementType() != element || !t.getLayout().isIdentity() ||
        !t.hasStaticShape())
      return op->emitError() << what << " needs dense static " << element
                             << " buffers, not " << t;
    pointers.push_back(cb.pointer(v));
  }
  return pointers;
}

/// Whether `v`'s elements are f32.
bool isF32(Value v) { return cast<ShapedType>(v.getType()).getElementType().isF32(); }

/// A fused attention as the device library's call: its buffers (inputs,
/// then results), then [batch, heads, Tq, Tk, D, Dv] of q [..., Tq, D],
/// k [..., Tk, D], v [..., Tk, Dv] (the dimensions before the last two
/// are batch and heads; more are folded into the batch), and causal.
LogicalResult callAttention(CallBuilder &cb, Operation *op, StringRef callee,
                            ValueRange inputs, ValueRange into, bool causal) {
  if (callee.empty())
    return op->emitError("internal error: the device's library has no such attention");
  FailureOr<SmallVector<Value>> pointers = densePointers(
      cb, op, inputs, into, "fused attention",
      cast<ShapedType>(inputs[0].getType()).getElementType());
  if (failed(pointers))
    return failure();
  SmallVector<Value> args = std::move(*pointers);
  ArrayRef<int64_t> q = cast<MemRefType>(inputs[0].getType()).getShape(),
                    k = cast<MemRefType>(inputs[1].getType()).getShape(),
                    v = cast<MemRefType>(inputs[2].getType()).getShape();
  int64_t rank = q.size(), heads = rank >= 3 ? q[rank - 3] : 1, batch = 1;
  for (int64_t i = 0; i + 3 < rank; ++i)
    batch *= q[i];
  Location loc = op->getLoc();
  for (int64_t d : {batch, heads, q[rank - 2], k[rank - 2], q[rank - 1], v[rank - 1],
                    int64_t(causal)})
    args.push_back(cb.constant(loc, d));
  cb.libraryCall(loc, callee, args);
  return success();
}

/// Self-attention over a packed projection as the device library's call:
/// its buffers (inputs, then results; a forward call not asked for the
/// statistics passes null for them), then qkv [B, T, 3C]'s batch, T, heads,
/// head size C / heads, and causal.
template <typename OpT>
LogicalResult callPackedAttention(CallBuilder &cb, OpT op, StringRef callee) {
  if (callee.empty())
    return op.emitError("internal error: the device's library has no packed attention");
  Location loc = op.getLoc();
  SmallVector<Value> args;
  for (Value v : llvm::concat<const Value>(op.getInputs(), op.getInto())) {
    auto t = cast<MemRefType>(v.getType());
    if (!t.getLayout().isIdentity() || !t.hasStaticShape())
      return op.emitError("fused attention needs dense static buffers, not ") << t;
    args.push_back(cb.pointer(v));
  }
  if constexpr (std::is_same_v<OpT, AttentionQkvForwardOp>)
    if (op.getInto().size() == 1)
      args.push_back(cb.nullPointer(loc));
  ArrayRef<int64_t> qkv = cast<MemRefType>(op.getInputs()[0].getType()).getShape();
  int64_t heads = op.getHeads();
  for (int64_t d : {qkv[0], qkv[1], heads, qkv[2] / 3 / heads, int64_t(op.getCausal())})
    args.push_back(cb.constant(loc, d));
  cb.libraryCall(loc, callee, args);
  return success();
}

/// A pooling or its gradient as the library's call: its buffers (inputs,
/// then the result), then x's [n, c, h, w] and the result's [oh, ow] in
/// NCHW order whatever the layout, the kernel, stride and padding pairs,
/// whether it takes the maximum, and whether it is channels last.
template <typename OpT>
LogicalResult callPool(CallBuilder &cb, OpT op, StringRef callee, ValueRange inputs,
                       ValueRange into) {
  if (callee.empty())
    return op.emitError("internal error: the device's library has no pooling");
  FailureOr<SmallVector<Value>> pointers = densePointers(
      cb, op, inputs, into, "the library's pooling", cb.builder().getF32Type());
  if (failed(pointers))
    return failure();
  SmallVector<Value> args = std::move(*pointers);
  SmallVector<int64_t> x(cast<MemRefType>(inputs[0].getType()).getShape());
  SmallVector<int64_t> y(cast<MemRefType>(
      (inputs.size() > 1 ? inputs[1] : into[0]).getType()).getShape());
  bool last = op.getChannelsLast();
  if (last) {
    x = {x[0], x[3], x[1], x[2]};
    y = {y[0], y[3], y[1], y[2]};
  }
  ArrayRef<int64_t> k = op.getKernel(), s = op.getStride(), p = op.getPadding();
  Location loc = op.getLoc();
  for (int64_t v : {x[0], x[1], x[2], x[3], y[2], y[3], k[0], k[1], s[0], s[1], p[0],
                    p[1], int64_t(op.getMax()), int64_t(last)})
    args.push_back(cb.constant(loc, v));
  cb.libraryCall(loc, callee, args);
  return success();
}

/// A batch-norm as the device library's call: its buffers (inputs, then
/// results), then x's [n, c] and the product of its other dimensions, and
/// epsilon.
LogicalResult callBatchNorm(CallBuilder &cb, Operation *op, StringRef callee,
                            ValueRange inputs, ValueRange into, APFloat epsilon) {
  FailureOr<SmallVector<Value>> pointers = densePointers(
      cb, op, inputs, into, "the library's batch-norm", cb.builder().getF32Type());
  if (failed(pointers))
    return failure();
  SmallVector<Value> args = std::move(*pointers);
  ArrayRef<int64_t> x = cast<MemRefType>(inputs[0].getType()).getShape();
  int64_t spatial = 1;
  for (int64_t d : x.drop_front(2))
    spatial *= d;
  Location loc = op->getLoc();
  for (int64_t d : {x[0], x[1], spatial})
    args.push_back(cb.constant(loc, d));
  args.push_back(arith::ConstantOp::create(
      cb.builder(), loc, cb.builder().getF64FloatAttr(epsilon.convertToDouble())));
  cb.libraryCall(loc, callee, args);
  return success();
}

/// A shard and the full rows it is gathered into or scattered from: f32,
/// contiguous, as the runtime's collectives take them.
LogicalResult checkShardedBuffers(Operation *op, Value shard, Value rows, StringRef what) {
  auto shardType = cast<MemRefType>(shard.getType());
  if (!shardType.getElementType().isF32())
    return op->emitError() << what << " need f32, not " << shardType.getElementType();
  if (!shardType.areTrailingDimsContiguous(shardType.getRank()) ||
      !cast<MemRefType>(rows.getType()).getLayout().isIdentity())
    return op->emitError("internal error: a collective of a strided shard");
  markCommunication(shard);
  markCommunication(rows);
  return success();
}

/// Ops that ask the runtime for a value: the step's shape, this rank, a
/// random key, a hyperparameter. None if `op` is none of them.
std::optional<LogicalResult> lowerQuery(CallBuilder &cb, Operation *op) {
  OpBuilder &b = cb.builder();
  Location loc = op->getLoc();
  Type i64 = b.getI64Type();
  auto asIndex = [&](Value v) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  auto replaceWith = [&](Value v) {
    op->getResult(0).replaceAllUsesWith(v);
    return success();
  };
  return TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](MicroBatchCountOp) {
        return replaceWith(asIndex(cb.call(loc, abi::sinter_rt_micro_batch_count, {}, {i64})[0]));
      })
      .Case([&](GlobalBatchOp) {
        return replaceWith(asIndex(cb.call(loc, abi::sinter_rt_global_batch, {}, {i64})[0]));
      })
      .Case([&](RankOp) {
        return replaceWith(asIndex(cb.call(loc, abi::sinter_rt_rank, {}, {i64})[0]));
      })
      .Case([&](RandomKeyOp r) {
        Value microBatch = arith::IndexCastOp::create(b, loc, i64, r.getMicroBatch());
        return replaceWith(cb.call(loc, abi::sinter_rt_random_key, {microBatch}, {i64})[0]);
      })
      .Case([&](SumOverRanksOp r) {
        return replaceWith(cb.call(loc, abi::sinter_rt_sum_over_ranks, {r.getValue()}, {i64})[0]);
      })
      .Case([&](HyperparameterOp h) {
        // The dialect's names, in abi.h's order (sinter_hyperparameter).
        ArrayRef<StringRef> names = HyperparameterOp::knownNames();
        static_assert(SINTER_HP_COUNT == 11, "a hyperparameter without a name");
        int64_t id = llvm::find(names, h.getName()) - names.begin();
        return replaceWith(cb.call(loc, abi::sinter_rt_hyperparameter, {cb.constant(loc, id)},
                                   {b.getF64Type()})[0]);
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// The point where a bucket's gradients are final: each must live in its
/// slot, the step's gradient argument of that name, because the runtime
/// sums the bucket's own memory.
LogicalResult lowerBucketReady(CallBuilder &cb, BucketReadyOp r) {
  auto func = r->getParentOfType<func::FuncOp>();
  auto layout = attrs::buckets.get(func);
  auto names = layout && r.getBucket() < layout.size() ? cast<ArrayAttr>(layout[r.getBucket()])
                                                       : ArrayAttr();
  if (!names || names.size() != r.getGradients().size())
    return r.emitError("internal error: bucket ")
           << r.getBucket() << " is not in the step's bucket layout";
  for (auto [g, name] : llvm::zip(r.getGradients(), names)) {
    auto arg = dyn_cast<BlockArgument>(g);
    if (!arg || attrs::gradient.getArg(func, arg.getArgNumber()) != name)
      return r.emitError("internal error: gradient ")
             << name << " is not computed in its bucket slot";
  }
  cb.call(r.getLoc(), abi::sinter_rt_bucket_ready, {cb.constant(r.getLoc(), r.getBucket())});
  return success();
}

/// Ops that move data between the runtime and the step, or between ranks:
/// inputs, buckets, statistics, shards. None if `op` is none of them.
std::optional<LogicalResult> lowerDataMovement(CallBuilder &cb, Operation *op) {
  Location loc = op->getLoc();
  auto count = [&](Value v) {
    return cb.constant(loc, cast<MemRefType>(v.getType()).getNumElements());
  };
  return TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](LoadInputOp l) {
        Value microBatch = arith::IndexCastOp::create(cb.builder(), loc,
                                                      cb.builder().getI64Type(), l.getMicroBatch());
        cb.call(loc, abi::sinter_rt_load_input, {cb.pointer(l.getBuffer()), microBatch});
        return success();
      })
      .Case([&](BucketReadyOp r) { return lowerBucketReady(cb, r); })
      .Case([&](GradientsReadyOp) {
        cb.call(loc, abi::sinter_rt_gradients_ready, {});
        return success();
      })
      .Case([&](AllReduceSumOp r) -> LogicalResult {
        Type et = cast<MemRefType>(r.getInput().getType()).getElementType();
        if (!et.isF32() && !et.isF64())
          return r.emitError("synchronized statistics need f32 or f64, not ") << et;
        cb.call(loc,
                et.isF32() ? abi::sinter_rt_all_reduce_sum_f32 : abi::sinter_rt_all_reduce_sum_f64,
                {cb.pointer(r.getInput()), count(r.getInput())});
        return success();
      })
      .Case([&](AllGatherOp g) -> LogicalResult {
        if (failed(checkShardedBuffers(g, g.getShard(), g.getDest(), "sharded parameters")))
          return failure();
        cb.call(loc, abi::sinter_rt_all_gather_f32,
                {cb.pointer(g.getShard()), cb.pointer(g.getDest()), count(g.getShard())});
        return success();
      })
      .Case([&](AllGatherStartOp g) -> LogicalResult {
        if (failed(checkShardedBuffers(g, g.getShard(), g.getRows(), "sharded parameters")))
          return failure();
        cb.call(loc, abi::sinter_rt_all_gather_start_f32,
                {cb.constant(loc, g.getId()), cb.pointer(g.getShard()), cb.pointer(g.getRows()),
                 count(g.getShard())});
        return success();
      })
      .Case([&](ReduceScatterStartOp r) -> LogicalResult {
        if (failed(checkShardedBuffers(r, r.getShard(), r.getRows(), "sharded gradients")))
          return failure();
        cb.call(loc, abi::sinter_rt_reduce_scatter_start_f32,
                {cb.constant(loc, r.getId()), cb.pointer(r.getRows()), cb.pointer(r.getShard()),
                 count(r.getShard())});
        return success();
      })
      .Case([&](CollectiveWaitOp w) {
        // The rows are the collective's until here: using them here keeps
        // the memory plan from giving their bytes to anything before.
        cb.call(loc, abi::sinter_rt_collective_wait,
                {cb.constant(loc, w.getId()), cb.pointer(w.getKeep())});
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Ops the device library computes: convolutions, fused attention,
/// batch-norm, pooling. None if `op` is none of them.
std::optional<LogicalResult> lowerLibraryCall(CallBuilder &cb, ModuleOp module,
                                              Operation *op) {
  // The device library's function: sinter_cpu_conv2d_f32, sinter_cuda_...
  auto library = [&](StringRef function) {
    StringAttr device = attrs::device.get(module);
    // Empty for a function the device lacks (a channels-last convolution
    // on CUDA), which callConv refuses.
    return std::string(abi::libraryCall(device ? device.getValue() : "cpu", function));
  };
  return TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](ConvForwardOp c) {
        return callConv(cb, c, library(convCall(c, "f32")), /*input=*/c.getLhs(),
                        /*grad=*/c.getInto(), /*weight=*/c.getRhs());
      })
      .Case([&](ConvBackwardDataOp c) {
        return callConv(cb, c, library(convCall(c, "backward_data_f32")),
                        /*input=*/c.getInto(), /*grad=*/c.getLhs(), /*weight=*/c.getRhs());
      })
      .Case([&](ConvBackwardWeightsOp c) {
        StringRef pass = c.getAccumulate() ? "backward_weights_add_f32"
                                           : "backward_weights_f32";
        return callConv(cb, c, library(convCall(c, pass)),
                        /*input=*/c.getLhs(), /*grad=*/c.getRhs(), /*weight=*/c.getInto());
      })
      .Case([&](AttentionForwardOp a) {
        return callAttention(
            cb, a, library(isF32(a.getInputs()[0]) ? "attention_f32" : "attention_bf16"),
            a.getInputs(), a.getInto(), a.getCausal());
      })
      .Case([&](AttentionBackwardOp a) {
        return callAttention(cb, a,
                             library(isF32(a.getInputs()[0]) ? "attention_backward_f32"
                                                             : "attention_backward_bf16"),
                             a.getInputs(), a.getInto(), a.getCausal());
      })
      .Case([&](AttentionQkvForwardOp a) {
        return callPackedAttention(
            cb, a, library(isF32(a.getInputs()[0]) ? "attention_qkv_f32" : "attention_qkv_bf16"));
      })
      .Case([&](AttentionQkvBackwardOp a) {
        return callPackedAttention(cb, a,
                                   library(isF32(a.getInputs()[0]) ? "attention_qkv_backward_f32"
                                                                   : "attention_qkv_backward_bf16"));
      })
      .Case([&](Pool2dForwardOp p) {
        return callPool(cb, p, library("pool2d_f32"), p.getInputs(), p.getInto());
      })
      .Case([&](Pool2dBackwardOp p) {
        return callPool(cb, p, library("pool2d_backward_f32"), p.getInputs(),
                        p.getInto());
      })
      .Case([&](BatchNormForwardOp n) {
        return callBatchNorm(cb, n, library("batch_norm_f32"), n.getInputs(), n.getInto(),
                             n.getEpsilon());
      })
      .Case([&](BatchNormBackwardOp n) {
        return callBatchNorm(cb, n, library("batch_norm_backward_f32"), n.getInputs(),
                             n.getInto(), n.getEpsilon());
      })
      .Default([](Operation *) { return std::nullopt; });
}

LogicalResult lower(ModuleOp module, Operation *op) {
  CallBuilder cb(module, op);
  if (std::optional<LogicalResult> lowered = lowerQuery(cb, op))
    return *lowered;
  if (std::optional<LogicalResult> lowered = lowerDataMovement(cb, op))
    return *lowered;
  if (std::optional<LogicalResult> lowered = lowerLibraryCall(cb, module, op))
    return *lowered;
  return op->emitError() << "'" << op->getName()
                         << "' must be gone before the runtime calls are made (run "
                            "train-accumulate)";
}

struct RuntimeCalls : public impl::RuntimeCallsBase<RuntimeCalls> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<TrainDialect>(op->getDialect()))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (failed(lower(module, op)))
        return signalPassFailure();
      op->erase();
    }
  }
};

} // namespace
} // namespace sinter::host
