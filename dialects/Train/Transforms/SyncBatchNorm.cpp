//===- SyncBatchNorm.cpp - Batch-norm statistics across ranks -------------===//
//
// parallel { batch_norm: SYNC } (DOMAIN.md 4): each micro-batch's
// batch-norm statistics cover that micro-batch on every rank, as PyTorch's
// SyncBatchNorm. The mean and variance become functions of the per-channel
// sum, sum of squares and count, each summed over the ranks; autodiff then
// derives SyncBatchNorm's backward pass (the gradient of a sum over ranks
// is the sum over ranks of the gradients).
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Train/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace sinter::train {
#define GEN_PASS_DEF_DISTSYNCBATCHNORM
#include "dialects/Train/Transforms/Passes.h.inc"
} // namespace sinter::train

using namespace mlir;
using namespace sinter::graph;

namespace sinter::train {
namespace {

void synchronize(BatchNormStatsOp stats) {
  OpBuilder b(stats);
  Location loc = stats.getLoc();
  Value x = stats.getInput();
  auto axes = b.getDenseI64ArrayAttr(stats.getAxes());
  auto keep = b.getBoolAttr(false);
  Value sum = ReduceSumOp::create(b, loc, x, axes, keep);
  Value squares = ReduceSumOp::create(b, loc, MulOp::create(b, loc, x, x), axes, keep);
  Value count = BatchNormCountOp::create(
      b, loc,
      RankedTensorType::get({}, cast<RankedTensorType>(x.getType()).getElementType()),
      x, axes);
  Value allSum = AllReduceSumOp::create(b, loc, sum);
  Value allSquares = AllReduceSumOp::create(b, loc, squares);
  Value allCount = AllReduceSumOp::create(b, loc, count);
  Value mean = DivOp::create(b, loc, allSum, allCount);
  Value var = SubOp::create(b, loc, DivOp::create(b, loc, allSquares, allCount),
                            MulOp::create(b, loc, mean, mean));
  stats.getMean().replaceAllUsesWith(mean);
  stats.getVar().replaceAllUsesWith(var);
  stats.erase();
}

struct DistSyncBatchNorm
    : public impl::DistSyncBatchNormBase<DistSyncBatchNorm> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!module->hasAttr("sinter.sync_batch_norm"))
      return;
    for (ModelOp model : module.getOps<ModelOp>()) {
      if (model.getPhase() != "train")
        continue;
      SmallVector<BatchNormStatsOp> stats;
      SmallVector<BatchNormCountOp> counts;
      model.walk([&](BatchNormStatsOp s) { stats.push_back(s); });
      model.walk([&](BatchNormCountOp c) { counts.push_back(c); });
      // The running variance's unbiased factor uses the count over ranks.
      for (BatchNormCountOp c : counts) {
        OpBuilder b(c->getBlock(), std::next(Block::iterator(c)));
        Value all = AllReduceSumOp::create(b, c.getLoc(), c.getResult());
        c.getResult().replaceAllUsesExcept(all, all.getDefiningOp());
      }
      for (BatchNormStatsOp s : stats)
        synchronize(s);
    }
  }
};

} // namespace
} // namespace sinter::train
