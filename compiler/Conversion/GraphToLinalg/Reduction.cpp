//===- Reduction.cpp - Reductions, softmax and normalisation statistics ---===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Train/IR/TrainOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::lowering {
namespace {

template <ReduceKind kind, typename OpT>
Results lowerReduce(TensorBuilder &tb, OpT op, typename OpT::Adaptor a) {
  return one(tb.reduce(a.getInput(), op.getAxes(), kind, op.getKeepdim()));
}

Results lowerMean(TensorBuilder &tb, ReduceMeanOp op, ReduceMeanOp::Adaptor a) {
  return one(tb.mean(a.getInput(), op.getAxes(), op.getKeepdim()));
}

Results lowerSoftmax(TensorBuilder &tb, SoftmaxOp op, SoftmaxOp::Adaptor a) {
  return one(tb.softmax(a.getInput(), op.getAxis()));
}

Results lowerLogSoftmax(TensorBuilder &tb, LogSoftmaxOp op,
                        LogSoftmaxOp::Adaptor a) {
  return one(tb.logSoftmax(a.getInput(), op.getAxis()));
}

/// Mean and biased variance over `axes`, optionally keeping them; the
/// variance of the deviations from the mean (two passes), not E[x^2]-E[x]^2.
Results stats(TensorBuilder &tb, Value x, ArrayRef<int64_t> axes, bool keepdim) {
  Value m = tb.mean(x, axes, /*keepdim=*/true);
  Value d = tb.sub(x, m);
  Value var = tb.mean(tb.mul(d, d), axes, keepdim);
  if (!keepdim)
    m = tb.reshape(m, shapeOf(var));
  return SmallVector<Value>{m, var};
}

Results lowerBatchNormStats(TensorBuilder &tb, BatchNormStatsOp op,
                            BatchNormStatsOp::Adaptor a) {
  return stats(tb, a.getInput(), op.getAxes(), false);
}

Results lowerLayerNormStats(TensorBuilder &tb, LayerNormStatsOp,
                            LayerNormStatsOp::Adaptor a) {
  int64_t last = typeOf(a.getInput()).getRank() - 1;
  return stats(tb, a.getInput(), {last}, true);
}

Results lowerBatchNormCount(TensorBuilder &tb, BatchNormCountOp op,
                            BatchNormCountOp::Adaptor a) {
  double count = 1;
  ArrayRef<int64_t> shape = shapeOf(a.getInput());
  for (int64_t axis : op.getAxes())
    count *= double(shape[axis]);
  return one(tb.filled({}, elementOf(a.getInput()), count));
}

/// The sum over ranks stays a collective: train.all_reduce_sum.
Results lowerAllReduceSum(TensorBuilder &tb, AllReduceSumOp op,
                          AllReduceSumOp::Adaptor a) {
  return one(train::AllReduceSumOp::create(tb.builder(), op.getLoc(), op.getType(),
                                           a.getInput())
                 .getResult());
}

} // namespace

void populateReductionPatterns(RewritePatternSet &patterns) {
  addLowering<ReduceSumOp>(patterns, lowerReduce<ReduceKind::Sum, ReduceSumOp>);
  addLowering<ReduceMaxOp>(patterns, lowerReduce<ReduceKind::Max, ReduceMaxOp>);
  addLowering<ReduceMinOp>(patterns, lowerReduce<ReduceKind::Min, ReduceMinOp>);
  addLowering<ReduceMeanOp>(patterns, lowerMean);
  addLowering<SoftmaxOp>(patterns, lowerSoftmax);
  addLowering<LogSoftmaxOp>(patterns, lowerLogSoftmax);
  addLowering<BatchNormStatsOp>(patterns, lowerBatchNormStats);
  addLowering<LayerNormStatsOp>(patterns, lowerLayerNormStats);
  addLowering<BatchNormCountOp>(patterns, lowerBatchNormCount);
  addLowering<AllReduceSumOp>(patterns, lowerAllReduceSum);
}

} // namespace sinter::lowering
