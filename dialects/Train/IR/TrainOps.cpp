//===- TrainOps.cpp - The Sinter train dialect's ops ----------------------===//

#include "dialects/Train/IR/TrainOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

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

} // namespace sinter::train
