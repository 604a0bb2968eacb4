//===- TrainLibraryOps.cpp - The train dialect's device library ops -------===//
//
// Verifiers, memory effects and bufferization of the ops a device's
// library implements: the convolutions, attention, batch norm and pooling.
//
//===----------------------------------------------------------------------===//

#include "dialects/Train/IR/TrainOps.h"

#include "runtime/contract/AbiNames.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

#include <type_traits>

using namespace mlir;
using namespace mlir::bufferization;

namespace sinter::train {

/// Whether `op` adds its result into `into` (a kernel gradient's
/// accumulator) instead of writing a new value.
template <typename OpT> bool accumulates(OpT op) {
  if constexpr (std::is_same_v<OpT, ConvBackwardWeightsOp>)
    return op.getAccumulate();
  return false;
}

// The library convolutions: both operands read, the result a new buffer
// (or, accumulating, `into`'s).
template <typename OpT> LogicalResult verifyConvLibraryOp(OpT op) {
  bool onTensors = isa<RankedTensorType>(op.getLhs().getType());
  if (onTensors != bool(op.getResult()) ||
      (onTensors ? bool(op.getInto()) != accumulates(op) : !op.getInto()))
    return op.emitOpError("on tensors returns its result (adding it to `into` when it "
                          "accumulates); on buffers writes `into`");
  if (op.getInto() && onTensors != isa<RankedTensorType>(op.getInto().getType()))
    return op.emitOpError("takes `into` as a tensor on tensors, a buffer on buffers");
  if (onTensors && op.getInto() && op.getInto().getType() != op.getResult().getType())
    return op.emitOpError("accumulates into a tensor of its result's type");
  auto out = onTensors ? cast<ShapedType>(op.getResult().getType())
                       : cast<ShapedType>(op.getInto().getType());
  for (ShapedType t : {cast<ShapedType>(op.getLhs().getType()),
                       cast<ShapedType>(op.getRhs().getType()), out})
    if (t.getRank() != 4 || !t.hasStaticShape())
      return op.emitOpError("takes static 4-D operands");
  if (op.getStride().size() != 2 || op.getPadding().size() != 2 ||
      op.getDilation().size() != 2)
    return op.emitOpError("takes two strides, paddings and dilations");
  if (op.getGroups() < 1)
    return op.emitOpError("takes a positive number of groups");
  return success();
}

/// A buffer the library can take: `buffer` itself when dense, else a dense
/// copy of it (a slice).
static Value denseBuffer(RewriterBase &rewriter, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getLayout().isIdentity())
    return buffer;
  Value copy = memref::AllocOp::create(
      rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()));
  memref::CopyOp::create(rewriter, loc, buffer, copy);
  return copy;
}

/// A new buffer for a library op's tensor result.
static Value newBuffer(RewriterBase &rewriter, Location loc, Type tensor) {
  auto type = cast<RankedTensorType>(tensor);
  return memref::AllocOp::create(rewriter, loc,
                                 MemRefType::get(type.getShape(), type.getElementType()));
}

/// Whether `operand` is the accumulator that `op` adds into in place.
template <typename OpT> bool addsInto(OpT op, OpOperand &operand) {
  if constexpr (std::is_same_v<OpT, ConvBackwardWeightsOp>)
    return op.getAccumulate() && operand.get() == op.getInto();
  return false;
}

/// What the library ops share in bufferization: every operand read, none
/// written in place, each result a new buffer (made by BUFFERIZE); except
/// that an accumulating kernel gradient reads and writes `into` in place,
/// its result that buffer.
#define LIBRARY_OP_BUFFERIZATION(OpT, BUFFERIZE)                                         \
  bool OpT::bufferizesToMemoryRead(OpOperand &, const AnalysisState &) { return true; }  \
  bool OpT::bufferizesToMemoryWrite(OpOperand &operand, const AnalysisState &) {         \
    return addsInto(*this, operand);                                                     \
  }                                                                                      \
  bool OpT::bufferizesToAllocation(Value) { return !accumulates(*this); }                \
  AliasingValueList OpT::getAliasingValues(OpOperand &operand, const AnalysisState &) {  \
    if (addsInto(*this, operand))                                                        \
      return {{getOperation()->getResult(0), BufferRelation::Equivalent}};               \
    return {};                                                                           \
  }                                                                                      \
  LogicalResult OpT::bufferize(RewriterBase &rewriter,                                   \
                               const BufferizationOptions &options,                      \
                               BufferizationState &state) {                              \
    return BUFFERIZE(*this, rewriter, options, state);                                   \
  }

template <typename OpT>
LogicalResult bufferizeConvLibraryOp(OpT op, RewriterBase &rewriter,
                                     const BufferizationOptions &options,
                                     BufferizationState &state) {
  Location loc = op.getLoc();
  FailureOr<Value> lhs = getBuffer(rewriter, op.getLhs(), options, state);
  FailureOr<Value> rhs = getBuffer(rewriter, op.getRhs(), options, state);
  if (failed(lhs) || failed(rhs))
    return failure();
  Value result, into;
  if (accumulates(op)) {
    // The sum is made in the accumulator's buffer; a strided one through a
    // dense copy of it, copied back.
    FailureOr<Value> acc = getBuffer(rewriter, op.getInto(), options, state);
    if (failed(acc))
      return failure();
    result = *acc;
    into = denseBuffer(rewriter, loc, result);
  } else {
    result = into = newBuffer(rewriter, loc, op.getResult().getType());
  }
  auto made = OpT::create(rewriter, loc, Type(), denseBuffer(rewriter, loc, *lhs),
                          denseBuffer(rewriter, loc, *rhs), into, op.getStrideAttr(),
                          op.getPaddingAttr(), op.getDilationAttr(),
                          op.getChannelsLastAttr(), op.getGroupsAttr());
  if (accumulates(op)) {
    made->setAttr("accumulate", rewriter.getUnitAttr());
    if (into != result)
      memref::CopyOp::create(rewriter, loc, into, result);
  }
  replaceOpWithBufferizedValues(rewriter, op.getOperation(), result);
  return success();
}

/// On tensors a result is a value of its operands alone, so one nobody
/// uses (the gradient of a model's input) is dropped; on buffers the op
/// reads both operands and writes `into` (reads it too, accumulating).
template <typename OpT>
void convLibraryOpEffects(
    OpT op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  if (isa<RankedTensorType>(op.getLhs().getType()))
    return;
  for (OpOperand &operand : op->getOpOperands()) {
    if (operand.get() == op.getInto())
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    if (operand.get() != op.getInto() || accumulates(op))
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  }
}

#define CONV_LIBRARY_INTERFACE(OpT)                                                      \
  LogicalResult OpT::verify() { return verifyConvLibraryOp(*this); }                     \
  void OpT::getEffects(                                                                  \
      SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {    \
    convLibraryOpEffects(*this, effects);                                                \
  }                                                                                      \
  LIBRARY_OP_BUFFERIZATION(OpT, bufferizeConvLibraryOp)
CONV_LIBRARY_INTERFACE(ConvForwardOp)
CONV_LIBRARY_INTERFACE(ConvBackwardDataOp)
CONV_LIBRARY_INTERFACE(ConvBackwardWeightsOp)
#undef CONV_LIBRARY_INTERFACE

// The variadic library ops (attention, batch-norm): every input read, each
// result a new buffer.

/// The operand and result counts of a variadic library op; the types of
/// its inputs and outputs (its results on tensors, `into` on buffers).
template <typename OpT>
FailureOr<SmallVector<ShapedType>> variadicLibraryTypes(OpT op, size_t inputs,
                                                        size_t results) {
  bool onTensors = !op.getResults().empty();
  if (onTensors == !op.getInto().empty())
    return op.emitOpError("on tensors returns its results; on buffers writes `into`");
  size_t outputs = onTensors ? op.getResults().size() : op.getInto().size();
  if (op.getInputs().size() != inputs || outputs != results)
    return op.emitOpError("takes ") << inputs << " inputs and gives " << results
                                    << " results";
  SmallVector<ShapedType> types;
  for (Value v : op.getInputs())
    types.push_back(cast<ShapedType>(v.getType()));
  for (Value v : onTensors ? ValueRange(op.getResults()) : ValueRange(op.getInto()))
    types.push_back(cast<ShapedType>(v.getType()));
  return types;
}

template <typename OpT>
LogicalResult verifyAttentionLibraryOp(OpT op, size_t inputs, size_t results) {
  FailureOr<SmallVector<ShapedType>> types = variadicLibraryTypes(op, inputs, results);
  if (failed(types))
    return failure();
  Type element = (*types)[0].getElementType();
  for (ShapedType t : *types)
    if (t.getRank() < 2 || !t.hasStaticShape() || t.getElementType() != element ||
        !(element.isBF16() || element.isF32()))
      return op.emitOpError("takes static operands of rank 2 or more, all bf16 or all f32");
  // Sinter's f32 kernels: self-attention, every operand of one shape, of
  // the head sizes they are built for.
  if (element.isF32() &&
      (!llvm::all_of(*types, [&](ShapedType t) { return t.getShape() == (*types)[0].getShape(); }) ||
       !abi::cudaAttentionF32Takes((*types)[0].getShape().back())))
    return op.emitOpError("in f32 takes operands of one shape with a head size of 32 or 64");
  return success();
}

/// x [N, C, ...] (and dy, y, dx: x's shape) first, the rest [C], all f32.
template <typename OpT>
LogicalResult verifyBatchNormLibraryOp(OpT op, size_t inputs, size_t results,
                                       ArrayRef<size_t> likeInput) {
  FailureOr<SmallVector<ShapedType>> types = variadicLibraryTypes(op, inputs, results);
  if (failed(types))
    return failure();
  ShapedType x = (*types)[0];
  if (x.getRank() < 2 || !x.hasStaticShape())
    return op.emitOpError("takes a static x of rank 2 or more");
  for (auto [i, t] : llvm::enumerate(*types)) {
    bool full = llvm::is_contained(likeInput, i);
    if (!t.getElementType().isF32() ||
        (full ? t.getShape() != x.getShape()
              : t.getRank() != 1 || t.getDimSize(0) != x.getDimSize(1)))
      return op.emitOpError("operand or result ")
             << i << " must be f32 " << (full ? "of x's shape" : "[C]") << ", not " << t;
  }
  return success();
}

/// Each input as a dense buffer, each result a new one; the op again on
/// them, with its own attributes, by `make(inputs, into)`.
template <typename OpT, typename MakeT>
LogicalResult bufferizeVariadicLibraryOp(OpT op, RewriterBase &rewriter,
                                         const BufferizationOptions &options,
                                         BufferizationState &state, MakeT make) {
  SmallVector<Value> inputs;
  for (Value input : op.getInputs()) {
    FailureOr<Value> buffer = getBuffer(rewriter, input, options, state);
    if (failed(buffer))
      return failure();
    inputs.push_back(denseBuffer(rewriter, op.getLoc(), *buffer));
  }
  SmallVector<Value> into;
  for (Value result : op.getResults())
    into.push_back(newBuffer(rewriter, op.getLoc(), result.getType()));
  make(inputs, into);
  replaceOpWithBufferizedValues(rewriter, op.getOperation(), into);
  return success();
}

template <typename OpT>
LogicalResult bufferizeAttentionLibraryOp(OpT op, RewriterBase &rewriter,
                                          const BufferizationOptions &options,
                                          BufferizationState &state) {
  return bufferizeVariadicLibraryOp(
      op, rewriter, options, state, [&](ValueRange inputs, ValueRange into) {
        OpT::create(rewriter, op.getLoc(), TypeRange(), inputs, into, op.getCausalAttr());
      });
}

/// qkv [B, T, 3C] bf16 or f32 (of `heads` heads) first; y and dy [B, T, C]
/// of its type; lse [B, heads, T] f32; dqkv as qkv. Forward: qkv -> y (, lse);
/// backward: qkv, y, lse, dy -> dqkv.
template <typename OpT> LogicalResult verifyPackedAttentionLibraryOp(OpT op) {
  bool forward = std::is_same_v<OpT, AttentionQkvForwardOp>;
  size_t inputs = forward ? 1 : 4;
  size_t results = forward ? op->getNumResults() + op.getInto().size() : 1;
  if (forward && (results < 1 || results > 2))
    return op.emitOpError("gives the result, and the statistics when asked");
  FailureOr<SmallVector<ShapedType>> types = variadicLibraryTypes(op, inputs, results);
  if (failed(types))
    return failure();
  ShapedType qkv = (*types)[0];
  auto heads = int64_t(op.getHeads());
  if (qkv.getRank() != 3 || !qkv.hasStaticShape() || qkv.getDimSize(2) % 3 != 0 ||
      heads < 1 || (qkv.getDimSize(2) / 3) % heads != 0)
    return op.emitOpError("takes a static qkv [B, T, 3C] of whole heads, not ") << qkv;
  int64_t b = qkv.getDimSize(0), t = qkv.getDimSize(1), c = qkv.getDimSize(2) / 3;
  Builder builder(op.getContext());
  // cuDNN's kernels take bf16, Sinter's own f32 (of their head sizes).
  Type element = qkv.getElementType();
  if (!element.isBF16() && !element.isF32())
    return op.emitOpError("takes bf16 or f32, not ") << element;
  if (element.isF32() && !abi::cudaAttentionF32Takes(c / heads))
    return op.emitOpError("in f32 takes heads of 32 or 64, not ") << c / heads;
  auto y = RankedTensorType::get({b, t, c}, element);
  auto lse = RankedTensorType::get({b, heads, t}, builder.getF32Type());
  SmallVector<ShapedType> expected = {qkv, y};
  if (!forward)
    expected.append({lse, y, qkv});
  else if (results == 2)
    expected.push_back(lse);
  for (auto [i, pair] : llvm::enumerate(llvm::zip(*types, expected))) {
    auto [actual, wanted] = pair;
    if (actual.getShape() != wanted.getShape() ||
        actual.getElementType() != wanted.getElementType())
      return op.emitOpError("operand or result ")
             << i << " should be " << wanted << ", not " << actual;
  }
  return success();
}

template <typename OpT>
LogicalResult bufferizePackedAttentionLibraryOp(OpT op, RewriterBase &rewriter,
                                                const BufferizationOptions &options,
                                                BufferizationState &state) {
  return bufferizeVariadicLibraryOp(
      op, rewriter, options, state, [&](ValueRange inputs, ValueRange into) {
        OpT::create(rewriter, op.getLoc(), TypeRange(), inputs, into, op.getHeadsAttr(),
                    op.getCausalAttr());
      });
}

template <typename OpT>
LogicalResult bufferizeBatchNormLibraryOp(OpT op, RewriterBase &rewriter,
                                          const BufferizationOptions &options,
                                          BufferizationState &state) {
  return bufferizeVariadicLibraryOp(
      op, rewriter, options, state, [&](ValueRange inputs, ValueRange into) {
        OpT::create(rewriter, op.getLoc(), TypeRange(), inputs, into, op.getEpsilonAttr());
      });
}

/// x (and dy) in, the result out: static rank-4 f32 of the pooling's
/// shapes, with (height, width) pairs.
template <typename OpT>
LogicalResult verifyPoolLibraryOp(OpT op, size_t inputs) {
  FailureOr<SmallVector<ShapedType>> types = variadicLibraryTypes(op, inputs, 1);
  if (failed(types))
    return failure();
  for (ShapedType t : *types)
    if (t.getRank() != 4 || !t.hasStaticShape() || !t.getElementType().isF32())
      return op.emitOpError("takes static 4-D f32 operands, not ") << t;
  if (op.getKernel().size() != 2 || op.getStride().size() != 2 ||
      op.getPadding().size() != 2)
    return op.emitOpError("takes (height, width) kernel, stride and padding");
  // The pooled shape from x's, in x's layout: [N, C, OH, OW] or [N, OH, OW, C].
  ArrayRef<int64_t> x = (*types)[0].getShape();
  bool last = op.getChannelsLast();
  int64_t spatial = last ? 1 : 2;
  SmallVector<int64_t> pooled(x);
  for (int i = 0; i < 2; ++i) {
    int64_t k = op.getKernel()[i], s = op.getStride()[i], p = op.getPadding()[i];
    if (k < 1 || s < 1 || p < 0 || 2 * p > k || x[spatial + i] + 2 * p < k)
      return op.emitOpError("has a window that does not fit the padded input");
    pooled[spatial + i] = (x[spatial + i] + 2 * p - k) / s + 1;
  }
  // Forward: x -> pooled. Backward: x, pooled gradient -> x's gradient.
  ShapedType pooledType = (*types)[1];
  if (pooledType.getShape() != ArrayRef<int64_t>(pooled))
    return op.emitOpError("takes or gives the pooled shape ")
           << RankedTensorType::get(pooled, pooledType.getElementType()) << ", not "
           << pooledType;
  if (inputs == 2 && (*types)[2].getShape() != x)
    return op.emitOpError("gives the gradient of x in x's shape, not ") << (*types)[2];
  return success();
}

template <typename OpT>
LogicalResult bufferizePoolLibraryOp(OpT op, RewriterBase &rewriter,
                                     const BufferizationOptions &options,
                                     BufferizationState &state) {
  return bufferizeVariadicLibraryOp(
      op, rewriter, options, state, [&](ValueRange inputs, ValueRange into) {
        OpT::create(rewriter, op.getLoc(), TypeRange(), inputs, into,
                    op.getKernelAttr(), op.getStrideAttr(), op.getPaddingAttr(),
                    op.getMaxAttr(), op.getChannelsLastAttr());
      });
}

/// As the library convolutions: pure on tensors; on buffers it reads its
/// inputs and writes `into`.
template <typename OpT>
void variadicLibraryOpEffects(
    OpT op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  for (OpOperand &operand : op.getInputsMutable())
    if (!op.getInto().empty())
      effects.emplace_back(MemoryEffects::Read::get(), &operand,
                           SideEffects::DefaultResource::get());
  for (OpOperand &operand : op.getIntoMutable())
    effects.emplace_back(MemoryEffects::Write::get(), &operand,
                         SideEffects::DefaultResource::get());
}

#define VARIADIC_LIBRARY_INTERFACE(OpT, VERIFY, BUFFERIZE)                               \
  LogicalResult OpT::verify() { return VERIFY; }                                         \
  void OpT::getEffects(                                                                  \
      SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {    \
    variadicLibraryOpEffects(*this, effects);                                            \
  }                                                                                      \
  LIBRARY_OP_BUFFERIZATION(OpT, BUFFERIZE)
VARIADIC_LIBRARY_INTERFACE(AttentionForwardOp, verifyAttentionLibraryOp(*this, 3, 1),
                           bufferizeAttentionLibraryOp)
VARIADIC_LIBRARY_INTERFACE(AttentionBackwardOp, verifyAttentionLibraryOp(*this, 4, 3),
                           bufferizeAttentionLibraryOp)
// qkv -> y (, lse); qkv, y, lse, dy -> dqkv.
VARIADIC_LIBRARY_INTERFACE(AttentionQkvForwardOp, verifyPackedAttentionLibraryOp(*this),
                           bufferizePackedAttentionLibraryOp)
VARIADIC_LIBRARY_INTERFACE(AttentionQkvBackwardOp, verifyPackedAttentionLibraryOp(*this),
                           bufferizePackedAttentionLibraryOp)
// x, weight, bias -> y, mean, invstd.
VARIADIC_LIBRARY_INTERFACE(BatchNormForwardOp,
                           verifyBatchNormLibraryOp(*this, 3, 3, {0, 3}),
                           bufferizeBatchNormLibraryOp)
// x, dy, weight, mean, invstd -> dx, dweight, dbias.
VARIADIC_LIBRARY_INTERFACE(BatchNormBackwardOp,
                           verifyBatchNormLibraryOp(*this, 5, 3, {0, 1, 5}),
                           bufferizeBatchNormLibraryOp)
// x -> y; x, dy -> dx.
VARIADIC_LIBRARY_INTERFACE(Pool2dForwardOp, verifyPoolLibraryOp(*this, 1),
                           bufferizePoolLibraryOp)
VARIADIC_LIBRARY_INTERFACE(Pool2dBackwardOp, verifyPoolLibraryOp(*this, 2),
                           bufferizePoolLibraryOp)
#undef VARIADIC_LIBRARY_INTERFACE
#undef LIBRARY_OP_BUFFERIZATION

} // namespace sinter::train
