//===- SyncBatchNorm.cpp - Batch-norm statistics across ranks -------------===//
//
// parallel { batch_norm: SYNC } (DOMAIN.md 4): each micro-batch's
// batch-norm statistics cover that micro-batch on every rank, as PyTorch's
// SyncBatchNorm. The mean becomes the per-channel sum over the ranks divided
// by the count over the ranks, and the variance the sum over the ranks of
// squared deviations from that mean, over the same count; autodiff then
// derives SyncBatchNorm's backward pass (the gradient of a sum over ranks
// is the sum over ranks of the gradients).
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sinter/IR/SinterAttrs.h"
#include "dialects/Train/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::train {
#define GEN_PASS_DEF_DISTSYNCBATCHNORM
#include "dialects/Train/Transforms/Passes.h.inc"

namespace {

/// Two passes over the ranks: the global mean from the summed sums and
/// counts, then the variance from the summed squares of deviations from that
/// mean. A sum of squares minus the squared mean would cancel when |mean| is
/// much larger than the standard deviation.
void synchronize(BatchNormStatsOp stats) {
  OpBuilder b(stats);
  Location loc = stats.getLoc();
  Value x = stats.getInput();
  auto axes = b.getDenseI64ArrayAttr(stats.getAxes());
  Type et = cast<RankedTensorType>(x.getType()).getElementType();
  Value count = BatchNormCountOp::create(b, loc, RankedTensorType::get({}, et),
                                         x, axes);
  Value allCount = AllReduceSumOp::create(b, loc, count);
  // Per channel, with the reduced axes kept so that it broadcasts over x.
  Value sum = ReduceSumOp::create(b, loc, x, axes, b.getBoolAttr(true));
  Value mean = DivOp::create(b, loc, AllReduceSumOp::create(b, loc, sum),
                             allCount);
  Value d = SubOp::create(b, loc, x, mean);
  Value squares = ReduceSumOp::create(b, loc, MulOp::create(b, loc, d, d),
                                      axes, b.getBoolAttr(false));
  Value var = DivOp::create(b, loc, AllReduceSumOp::create(b, loc, squares),
                            allCount);
  Value flatMean =
      ReshapeOp::create(b, loc, stats.getMean().getType(), mean);
  stats.getMean().replaceAllUsesWith(flatMean);
  stats.getVar().replaceAllUsesWith(var);
  stats.erase();
}

struct DistSyncBatchNorm
    : public impl::DistSyncBatchNormBase<DistSyncBatchNorm> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!attrs::syncBatchNorm.has(module))
      return;
    for (ModelOp model : module.getOps<ModelOp>()) {
      if (model.getPhase() != "train")
        continue;
      // The model's batch-norms, and those of the blocks it calls.
      SmallVector<Operation *> scopes = {model};
      SetVector<Operation *> callees;
      model.walk([&](func::CallOp call) {
        callees.insert(SymbolTable::lookupNearestSymbolFrom(call, call.getCalleeAttr()));
      });
      scopes.append(callees.begin(), callees.end());
      SmallVector<BatchNormStatsOp> stats;
      SmallVector<BatchNormCountOp> counts;
      for (Operation *scope : scopes) {
        scope->walk([&](BatchNormStatsOp s) { stats.push_back(s); });
        scope->walk([&](BatchNormCountOp c) { counts.push_back(c); });
      }
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
