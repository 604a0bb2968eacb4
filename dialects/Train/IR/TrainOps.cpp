//===- TrainOps.cpp - The train dialect's step ops ------------------------===//
//
// The ops TableGen defines, and the hand-written parts of the ops around
// one training step: the micro-batch input, the hyperparameters and the
// SGD update. The collectives are in TrainCollectiveOps.cpp, the device
// library ops in TrainLibraryOps.cpp.
//
//===----------------------------------------------------------------------===//

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
