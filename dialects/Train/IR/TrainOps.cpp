//===- TrainOps.cpp - The Sinter train dialect's ops ----------------------===//

#include "dialects/Train/IR/TrainOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::bufferization;

#define GET_OP_CLASSES
#include "dialects/Train/IR/TrainOps.cpp.inc"

namespace sinter::train {

// The input's buffer is overwritten, never read: each micro-batch replaces
// the last in place.
bool MicroBatchInputOp::bufferizesToMemoryRead(OpOperand &, const AnalysisState &) {
  return false;
}

bool MicroBatchInputOp::bufferizesToMemoryWrite(OpOperand &operand,
                                                const AnalysisState &) {
  return operand.get() == getDest();
}

AliasingValueList MicroBatchInputOp::getAliasingValues(OpOperand &operand,
                                                       const AnalysisState &) {
  if (operand.get() != getDest())
    return {};
  return {{getResult(), BufferRelation::Equivalent}};
}

LogicalResult MicroBatchInputOp::bufferize(RewriterBase &rewriter,
                                           const BufferizationOptions &options,
                                           BufferizationState &state) {
  FailureOr<Value> buffer = getBuffer(rewriter, getDest(), options, state);
  if (failed(buffer))
    return failure();
  LoadInputOp::create(rewriter, getLoc(), *buffer, getMicroBatch(), getNameAttr());
  replaceOpWithBufferizedValues(rewriter, getOperation(), *buffer);
  return success();
}

LogicalResult BucketReadyOp::verify() {
  bool tensors = llvm::all_of(getGradients().getTypes(),
                              [](Type t) { return isa<RankedTensorType>(t); });
  bool buffers =
      llvm::all_of(getGradients().getTypes(), [](Type t) { return isa<MemRefType>(t); });
  if (getGradients().empty() || (!tensors && !buffers))
    return emitOpError("takes one or more gradients, all tensors or all "
                       "buffers");
  if (buffers && !getResults().empty())
    return emitOpError("on buffers has no results");
  if (tensors && getResults().getTypes() != getGradients().getTypes())
    return emitOpError("on tensors returns its operands' types");
  return success();
}

// The bucket is read and written in place (the sum over ranks).
bool BucketReadyOp::bufferizesToMemoryRead(OpOperand &, const AnalysisState &) {
  return true;
}

bool BucketReadyOp::bufferizesToMemoryWrite(OpOperand &, const AnalysisState &) {
  return true;
}

AliasingValueList BucketReadyOp::getAliasingValues(OpOperand &operand,
                                                   const AnalysisState &) {
  return {{getResult(operand.getOperandNumber()), BufferRelation::Equivalent}};
}

LogicalResult BucketReadyOp::bufferize(RewriterBase &rewriter,
                                       const BufferizationOptions &options,
                                       BufferizationState &state) {
  SmallVector<Value> buffers;
  for (Value g : getGradients()) {
    FailureOr<Value> buffer = getBuffer(rewriter, g, options, state);
    if (failed(buffer))
      return failure();
    buffers.push_back(*buffer);
  }
  BucketReadyOp::create(rewriter, getLoc(), TypeRange{}, getBucketAttr(), buffers);
  replaceOpWithBufferizedValues(rewriter, getOperation(), buffers);
  return success();
}

bool AllReduceSumOp::bufferizesToMemoryRead(OpOperand &, const AnalysisState &) {
  return true;
}

bool AllReduceSumOp::bufferizesToMemoryWrite(OpOperand &, const AnalysisState &) {
  return true;
}

AliasingValueList AllReduceSumOp::getAliasingValues(OpOperand &, const AnalysisState &) {
  return {{getResult(), BufferRelation::Equivalent}};
}

LogicalResult AllReduceSumOp::bufferize(RewriterBase &rewriter,
                                        const BufferizationOptions &options,
                                        BufferizationState &state) {
  FailureOr<Value> buffer = getBuffer(rewriter, getInput(), options, state);
  if (failed(buffer))
    return failure();
  AllReduceSumOp::create(rewriter, getLoc(), Type(), *buffer);
  replaceOpWithBufferizedValues(rewriter, getOperation(), *buffer);
  return success();
}

LogicalResult AllGatherOp::verify() {
  auto shard = cast<ShapedType>(getShard().getType());
  auto dest = cast<ShapedType>(getDest().getType());
  if (isa<RankedTensorType>(shard) != isa<RankedTensorType>(dest))
    return emitOpError("takes two tensors or two buffers");
  if (isa<MemRefType>(dest) ? bool(getResult())
                            : !getResult() || getResult().getType() != dest)
    return emitOpError("returns its destination's type on tensors, nothing on "
                       "buffers");
  if (!shard.hasStaticShape() || !dest.hasStaticShape() || shard.getRank() != 1 ||
      dest.getRank() != 2 || dest.getDimSize(1) != shard.getDimSize(0) ||
      shard.getElementType() != dest.getElementType())
    return emitOpError("gathers a static 1-D shard into rows of its size and "
                       "element type");
  return success();
}

// The shard is read; the rows are written in place.
bool AllGatherOp::bufferizesToMemoryRead(OpOperand &operand, const AnalysisState &) {
  return operand.getOperandNumber() == 0;
}

bool AllGatherOp::bufferizesToMemoryWrite(OpOperand &operand, const AnalysisState &) {
  return operand.getOperandNumber() == 1;
}

AliasingValueList AllGatherOp::getAliasingValues(OpOperand &operand,
                                                 const AnalysisState &) {
  if (operand.getOperandNumber() != 1)
    return {};
  return {{getResult(), BufferRelation::Equivalent}};
}

LogicalResult AllGatherOp::bufferize(RewriterBase &rewriter,
                                     const BufferizationOptions &options,
                                     BufferizationState &state) {
  FailureOr<Value> shard = getBuffer(rewriter, getShard(), options, state);
  FailureOr<Value> dest = getBuffer(rewriter, getDest(), options, state);
  if (failed(shard) || failed(dest))
    return failure();
  AllGatherOp::create(rewriter, getLoc(), Type(), *shard, *dest);
  replaceOpWithBufferizedValues(rewriter, getOperation(), *dest);
  return success();
}

LogicalResult AllGatherStartOp::verify() {
  auto shard = cast<ShapedType>(getShard().getType());
  bool onTensors = isa<RankedTensorType>(shard);
  if (onTensors != bool(getResult()) || onTensors == bool(getRows()))
    return emitOpError("on tensors returns the rows; on buffers writes `into`");
  auto rows = onTensors ? cast<ShapedType>(getResult().getType())
                        : cast<ShapedType>(getRows().getType());
  if (!shard.hasStaticShape() || shard.getRank() != 1 || !rows.hasStaticShape() ||
      rows.getRank() != 2 || rows.getDimSize(1) != shard.getDimSize(0) ||
      shard.getElementType() != rows.getElementType())
    return emitOpError("gathers a static 1-D shard into rows of its size and "
                       "element type");
  return success();
}

bool AllGatherStartOp::bufferizesToMemoryRead(OpOperand &, const AnalysisState &) {
  return true;
}

bool AllGatherStartOp::bufferizesToMemoryWrite(OpOperand &, const AnalysisState &) {
  return false;
}

bool AllGatherStartOp::bufferizesToAllocation(Value) { return true; }

AliasingValueList AllGatherStartOp::getAliasingValues(OpOperand &,
                                                      const AnalysisState &) {
  return {};
}

LogicalResult AllGatherStartOp::bufferize(RewriterBase &rewriter,
                                          const BufferizationOptions &options,
                                          BufferizationState &state) {
  FailureOr<Value> shard = getBuffer(rewriter, getShard(), options, state);
  if (failed(shard))
    return failure();
  auto type = cast<RankedTensorType>(getResult().getType());
  Value rows = memref::AllocOp::create(
      rewriter, getLoc(), MemRefType::get(type.getShape(), type.getElementType()));
  AllGatherStartOp::create(rewriter, getLoc(), Type(), getIdAttr(), *shard, rows);
  replaceOpWithBufferizedValues(rewriter, getOperation(), rows);
  return success();
}

// The library convolutions: both operands read, the result a new buffer.
template <typename OpT> LogicalResult verifyConvLibraryOp(OpT op) {
  bool onTensors = isa<RankedTensorType>(op.getLhs().getType());
  if (onTensors != bool(op.getResult()) || onTensors == bool(op.getInto()))
    return op.emitOpError("on tensors returns its result; on buffers writes `into`");
  auto out = onTensors ? cast<ShapedType>(op.getResult().getType())
                       : cast<ShapedType>(op.getInto().getType());
  for (ShapedType t : {cast<ShapedType>(op.getLhs().getType()),
                       cast<ShapedType>(op.getRhs().getType()), out})
    if (t.getRank() != 4 || !t.hasStaticShape())
      return op.emitOpError("takes static 4-D operands");
  if (op.getStride().size() != 2 || op.getPadding().size() != 2 ||
      op.getDilation().size() != 2)
    return op.emitOpError("takes two strides, paddings and dilations");
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

/// What the library ops share in bufferization: every operand read, none
/// written in place, each result a new buffer (made by BUFFERIZE).
#define LIBRARY_OP_BUFFERIZATION(OpT, BUFFERIZE)                                         \
  bool OpT::bufferizesToMemoryRead(OpOperand &, const AnalysisState &) { return true; }  \
  bool OpT::bufferizesToMemoryWrite(OpOperand &, const AnalysisState &) {                \
    return false;                                                                        \
  }                                                                                      \
  bool OpT::bufferizesToAllocation(Value) { return true; }                               \
  AliasingValueList OpT::getAliasingValues(OpOperand &, const AnalysisState &) {         \
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
  FailureOr<Value> lhs = getBuffer(rewriter, op.getLhs(), options, state);
  FailureOr<Value> rhs = getBuffer(rewriter, op.getRhs(), options, state);
  if (failed(lhs) || failed(rhs))
    return failure();
  Value into = newBuffer(rewriter, op.getLoc(), op.getResult().getType());
  OpT::create(rewriter, op.getLoc(), Type(), denseBuffer(rewriter, op.getLoc(), *lhs),
              denseBuffer(rewriter, op.getLoc(), *rhs), into, op.getStrideAttr(),
              op.getPaddingAttr(), op.getDilationAttr());
  replaceOpWithBufferizedValues(rewriter, op.getOperation(), into);
  return success();
}

/// On tensors a result is a value of its operands alone, so one nobody
/// uses (the gradient of a model's input) is dropped; on buffers the op
/// reads both operands and writes `into`.
template <typename OpT>
void convLibraryOpEffects(
    OpT op,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  if (!op.getInto())
    return;
  for (OpOperand &operand : op->getOpOperands()) {
    if (operand.get() == op.getInto())
      effects.emplace_back(MemoryEffects::Write::get(), &operand,
                           SideEffects::DefaultResource::get());
    else
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
  for (ShapedType t : *types)
    if (t.getRank() < 2 || !t.hasStaticShape() || !t.getElementType().isBF16())
      return op.emitOpError("takes static bf16 operands of rank 2 or more");
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
/// them with its own attribute `attr`.
template <typename OpT, typename AttrT>
LogicalResult bufferizeVariadicLibraryOp(OpT op, RewriterBase &rewriter,
                                         const BufferizationOptions &options,
                                         BufferizationState &state, AttrT attr) {
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
  OpT::create(rewriter, op.getLoc(), TypeRange(), inputs, into, attr);
  replaceOpWithBufferizedValues(rewriter, op.getOperation(), into);
  return success();
}

template <typename OpT>
LogicalResult bufferizeAttentionLibraryOp(OpT op, RewriterBase &rewriter,
                                          const BufferizationOptions &options,
                                          BufferizationState &state) {
  return bufferizeVariadicLibraryOp(op, rewriter, options, state, op.getCausalAttr());
}

template <typename OpT>
LogicalResult bufferizeBatchNormLibraryOp(OpT op, RewriterBase &rewriter,
                                          const BufferizationOptions &options,
                                          BufferizationState &state) {
  return bufferizeVariadicLibraryOp(op, rewriter, options, state, op.getEpsilonAttr());
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
// x, weight, bias -> y, mean, invstd.
VARIADIC_LIBRARY_INTERFACE(BatchNormForwardOp,
                           verifyBatchNormLibraryOp(*this, 3, 3, {0, 3}),
                           bufferizeBatchNormLibraryOp)
// x, dy, weight, mean, invstd -> dx, dweight, dbias.
VARIADIC_LIBRARY_INTERFACE(BatchNormBackwardOp,
                           verifyBatchNormLibraryOp(*this, 5, 3, {0, 1, 5}),
                           bufferizeBatchNormLibraryOp)
#undef VARIADIC_LIBRARY_INTERFACE
#undef LIBRARY_OP_BUFFERIZATION

LogicalResult ReduceScatterStartOp::verify() {
  auto rows = cast<ShapedType>(getRows().getType());
  bool onTensors = isa<RankedTensorType>(rows);
  if (onTensors != bool(getResult()) || onTensors == bool(getShard()))
    return emitOpError("on tensors returns the shard; on buffers writes `into`");
  auto shard = onTensors ? cast<ShapedType>(getResult().getType())
                         : cast<ShapedType>(getShard().getType());
  if (!rows.hasStaticShape() || rows.getRank() != 2 || !shard.hasStaticShape() ||
      shard.getRank() != 1 || shard.getDimSize(0) != rows.getDimSize(1) ||
      shard.getElementType() != rows.getElementType())
    return emitOpError("scatters static rows into a 1-D shard of a row's size "
                       "and element type");
  return success();
}

bool ReduceScatterStartOp::bufferizesToMemoryRead(OpOperand &, const AnalysisState &) {
  return true;
}

bool ReduceScatterStartOp::bufferizesToMemoryWrite(OpOperand &, const AnalysisState &) {
  return false;
}

bool ReduceScatterStartOp::bufferizesToAllocation(Value) { return true; }

AliasingValueList ReduceScatterStartOp::getAliasingValues(OpOperand &,
                                                          const AnalysisState &) {
  return {};
}

LogicalResult ReduceScatterStartOp::bufferize(RewriterBase &rewriter,
                                              const BufferizationOptions &options,
                                              BufferizationState &state) {
  FailureOr<Value> rows = getBuffer(rewriter, getRows(), options, state);
  if (failed(rows))
    return failure();
  auto type = cast<RankedTensorType>(getResult().getType());
  Value shard = memref::AllocOp::create(
      rewriter, getLoc(), MemRefType::get(type.getShape(), type.getElementType()));
  ReduceScatterStartOp::create(rewriter, getLoc(), Type(), getIdAttr(), *rows, shard);
  replaceOpWithBufferizedValues(rewriter, getOperation(), shard);
  return success();
}

// The waited value is written (by the collective) in place; what is kept is
// only read.
bool CollectiveWaitOp::bufferizesToMemoryRead(OpOperand &, const AnalysisState &) {
  return true;
}

bool CollectiveWaitOp::bufferizesToMemoryWrite(OpOperand &operand,
                                               const AnalysisState &) {
  return operand.getOperandNumber() == 0;
}

AliasingValueList CollectiveWaitOp::getAliasingValues(OpOperand &operand,
                                                      const AnalysisState &) {
  if (operand.getOperandNumber() != 0)
    return {};
  return {{getResult(), BufferRelation::Equivalent}};
}

LogicalResult CollectiveWaitOp::bufferize(RewriterBase &rewriter,
                                          const BufferizationOptions &options,
                                          BufferizationState &state) {
  FailureOr<Value> value = getBuffer(rewriter, getValue(), options, state);
  FailureOr<Value> keep = getBuffer(rewriter, getKeep(), options, state);
  if (failed(value) || failed(keep))
    return failure();
  CollectiveWaitOp::create(rewriter, getLoc(), Type(), getIdAttr(), *value, *keep);
  replaceOpWithBufferizedValues(rewriter, getOperation(), *value);
  return success();
}

ArrayRef<StringRef> HyperparameterOp::knownNames() {
  static const StringRef names[] = {
      "lr",  "step",     "weight_decay", "weight_decay_1d", "beta1", "beta2",
      "eps", "momentum", "nesterov",     "max_grad_norm",   "apply"};
  return names;
}

LogicalResult HyperparameterOp::verify() {
  if (!llvm::is_contained(knownNames(), getName()))
    return emitOpError("unknown hyperparameter '")
           << getName() << "'; known: " << llvm::join(knownNames(), ", ");
  return success();
}

LogicalResult SGDUpdateOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &inferred) {
  // param, grad, [momentum buffer], five scalars.
  inferred.push_back(operands[0].getType());
  if (operands.size() == 8)
    inferred.push_back(operands[2].getType());
  return success();
}

LogicalResult SGDUpdateOp::verify() {
  Type t = getParam().getType();
  if (getGrad().getType() != t ||
      (getMomentumBuffer() && getMomentumBuffer().getType() != t))
    return emitOpError("takes a gradient and momentum buffer of the "
                       "parameter's type");
  return success();
}

} // namespace sinter::train
