//===- TrainCollectiveOps.cpp - The train dialect's collectives -----------===//
//
// Verifiers and bufferization of the ops that communicate between ranks:
// gradient buckets, all-reduce, all-gather, reduce-scatter and the wait
// for a started collective.
//
//===----------------------------------------------------------------------===//

#include "dialects/Train/IR/TrainOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::bufferization;

namespace sinter::train {

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

} // namespace sinter::train
