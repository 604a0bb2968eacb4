//===- FuseElementwise.cpp - Elementwise fusion that keeps contractions ---===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/Transforms/Passes.h.inc"
} // namespace sinter

using namespace mlir;

namespace sinter {
namespace {

/// Fuse only into all-parallel generics (see the pass description).
bool intoParallelMap(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  return consumer && consumer.getNumLoops() == consumer.getNumParallelLoops();
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
