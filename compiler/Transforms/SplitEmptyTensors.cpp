//===- SplitEmptyTensors.cpp - One tensor.empty per use -------------------===//
//
// A tensor.empty has no contents, only a shape: giving each use its own is
// free, and it stops One-Shot Bufferize from treating every linalg op that
// writes into a CSE'd tensor.empty as an alias of every other (a quadratic
// conflict analysis at the depth of GPT-2).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace sinter {
#define GEN_PASS_DEF_SPLITEMPTYTENSORS
#include "compiler/Transforms/Passes.h.inc"
} // namespace sinter

using namespace mlir;

namespace sinter {
namespace {

struct SplitEmptyTensors
    : impl::SplitEmptyTensorsBase<SplitEmptyTensors> {
  void runOnOperation() override {
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
