//===- FuseElementwise.cpp - Elementwise fusion that keeps contractions ---===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/Transforms/Passes.h.inc"
} // namespace sinter

using namespace mlir;

namespace sinter {
namespace {

/// Whether the producer only moves data (a broadcast, a transpose, a copy):
/// its body yields its block arguments, so a copy of it per consumer costs
/// no arithmetic.
bool movesDataOnly(Operation *producer) {
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic)
    return false;
  Block &body = generic.getRegion().front();
  if (!llvm::hasSingleElement(body))
    return false;
  return llvm::all_of(body.getTerminator()->getOperands(), [&](Value v) {
    return isa<BlockArgument>(v) && cast<BlockArgument>(v).getOwner() == &body;
  });
}

/// Fuse only into all-parallel generics (see the pass description), and
/// only a producer whose value has no other user unless it just moves data.
/// Fusing a computing producer into each of its users would copy its work
/// into every one of them; along a residual stream (x + f(x), layer after
/// layer) the copies nest, and the program grows with the square of depth.
bool intoParallelMap(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!consumer || consumer.getNumLoops() != consumer.getNumParallelLoops())
    return false;
  Value fused = operand->get();
  return fused.hasOneUse() || movesDataOnly(fused.getDefiningOp());
}

struct FuseElementwise : public impl::FuseElementwiseBase<FuseElementwise> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, intoParallelMap);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter
