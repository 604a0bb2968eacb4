//===- BatchNorm.cpp - Whole batch-norm as the device library's calls -----===//
//
// graph.batch_norm and its gradient exist only where the device's library
// normalizes a batch whole (graph-fuse-batch-norm: cuDNN on CUDA). The
// library keeps 1 / sqrt(var + eps) rather than the variance, so the
// forward call's is turned into the variance the graph returns (for the
// running statistics) and back for the backward call: a few ulps on [C]
// values. The mean and invstd are cuDNN's saved cache of the forward pass
// (in spatial mode, the batch's mean and 1 / sqrt(var + eps));
// scripts/gpu-check.sh compares both with the CPU's statistics.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sinter/IR/SinterAttrs.h"
#include "dialects/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::lowering {
namespace {

LogicalResult needsLibrary(Operation *op) {
  if (attrs::fusesBatchNorm(op))
    return success();
  return op->emitError("internal error: '")
         << op->getName()
         << "' is made only for a device that normalizes a batch "
            "whole (run graph-fuse-batch-norm)";
}

Results lowerBatchNorm(TensorBuilder &tb, BatchNormOp op, BatchNormOp::Adaptor a) {
  if (failed(needsLibrary(op)))
    return failure();
  Type channels = op.getMean().getType();
  auto call = train::BatchNormForwardOp::create(
      tb.builder(), op.getLoc(), TypeRange{op.getResult().getType(), channels, channels},
      ValueRange{a.getInput(), a.getWeight(), a.getBias()}, ValueRange(),
      op.getEpsilonAttr());
  double eps = op.getEpsilon().convertToDouble();
  Value invstd = call.getResults()[2];
  Value var = tb.elementwise(
      shapeOf(invstd), elementOf(invstd), {invstd},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Type t = args[0].getType();
        Value square = arith::MulFOp::create(b, l, args[0], args[0]);
        Value sum =
            arith::DivFOp::create(b, l, TensorBuilder::scalarAt(b, l, 1.0, t), square);
        Value v = arith::SubFOp::create(b, l, sum, TensorBuilder::scalarAt(b, l, eps, t));
        // A constant channel's variance is 0, not the few ulps below it that
        // the subtraction can leave.
        return arith::MaximumFOp::create(b, l, v, TensorBuilder::scalarAt(b, l, 0.0, t));
      });
  return SmallVector<Value>{call.getResults()[0], call.getResults()[1], var};
}

Results lowerBatchNormGrad(TensorBuilder &tb, BatchNormGradOp op,
                           BatchNormGradOp::Adaptor a) {
  if (failed(needsLibrary(op)))
    return failure();
  double eps = op.getEpsilon().convertToDouble();
  Value var = a.getVar();
  Value invstd = tb.elementwise(
      shapeOf(var), elementOf(var), {var},
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value e = TensorBuilder::scalarAt(b, l, eps, args[0].getType());
        return math::RsqrtOp::create(b, l, arith::AddFOp::create(b, l, args[0], e));
      });
  auto call = train::BatchNormBackwardOp::create(
      tb.builder(), op.getLoc(), op->getResultTypes(),
      ValueRange{a.getInput(), a.getGrad(), a.getWeight(), a.getMean(), invstd},
      ValueRange(), op.getEpsilonAttr());
  return SmallVector<Value>(call.getResults());
}

} // namespace

void populateBatchNormPatterns(RewritePatternSet &patterns) {
  addLowering<BatchNormOp>(patterns, lowerBatchNorm);
  addLowering<BatchNormGradOp>(patterns, lowerBatchNormGrad);
}

} // namespace sinter::lowering
