//===- MathApproximations.cpp - Vectorizable f32 transcendental functions -===//

#include "compiler/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace sinter::cpu {
#define GEN_PASS_DEF_CPUMATHAPPROXIMATIONS
#include "compiler/Target/CPU/Passes.h.inc"

namespace {

struct CPUMathApproximations
    : public impl::CPUMathApproximationsBase<CPUMathApproximations> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Only the f32 forms are rewritten by these patterns (they check the
    // element type); the f32 expansion of narrower types is left out.
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) { return true; });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::cpu
