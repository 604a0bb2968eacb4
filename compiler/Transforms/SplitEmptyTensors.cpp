//===- SplitEmptyTensors.cpp - One tensor.empty per use -------------------===//
//
// A tensor.empty has no contents, only a shape: giving each use its own is
// free, and it stops One-Shot Bufferize from treating every linalg op that
// writes into a CSE'd tensor.empty as an alias of every other (a quadratic
// conflict analysis at the depth of GPT-2). A CSE'd fill that several ops
// write into is split the same way, first: a fill per op is cheaper than
// the copy of one filled buffer that bufferization makes for each.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_SPLITEMPTYTENSORS
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// A fill that several ops write into (CSE'd accumulators of reductions,
/// or the zeros the micro-batch loop starts gradient accumulators of one
/// shape from) becomes a fill per op: each is then written in place, where
/// one buffer filled once would be copied for every op but the last.
void splitFills(ModuleOp module) {
  SmallVector<linalg::FillOp> fills;
  module.walk([&](linalg::FillOp op) {
    if (op.hasPureTensorSemantics() && !op->hasOneUse() &&
        op.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>())
      fills.push_back(op);
  });
  OpBuilder builder(module.getContext());
  for (linalg::FillOp fill : fills) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : fill->getUses())
      uses.push_back(&use);
    auto writes = [](OpOperand *use) {
      if (auto loop = dyn_cast<scf::ForOp>(use->getOwner()))
        return use->getOperandNumber() >= loop.getNumControlOperands();
      auto dps = dyn_cast<DestinationStyleOpInterface>(use->getOwner());
      return dps && dps.isDpsInit(use);
    };
    if (!llvm::all_of(uses, writes))
      continue;
    for (OpOperand *use : uses) {
      builder.setInsertionPoint(use->getOwner());
      Operation *empty = builder.clone(*fill.getDpsInits()[0].getDefiningOp());
      IRMapping map;
      map.map(fill.getDpsInits()[0], empty->getResult(0));
      use->set(builder.clone(*fill, map)->getResult(0));
    }
    fill->erase();
  }
}

struct SplitEmptyTensors
    : impl::SplitEmptyTensorsBase<SplitEmptyTensors> {
  void runOnOperation() override {
    splitFills(getOperation());
    SmallVector<tensor::EmptyOp> empties;
    getOperation().walk([&](tensor::EmptyOp op) { empties.push_back(op); });
    OpBuilder builder(&getContext());
    for (tensor::EmptyOp empty : empties) {
      if (empty->hasOneUse())
        continue;
      // A copy right before each user; its dynamic sizes, defined before
      // the original, dominate it.
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : empty->getUses())
        uses.push_back(&use);
      for (OpOperand *use : uses) {
        builder.setInsertionPoint(use->getOwner());
        use->set(builder.clone(*empty)->getResult(0));
      }
      empty->erase();
    }
  }
};

} // namespace
} // namespace sinter
