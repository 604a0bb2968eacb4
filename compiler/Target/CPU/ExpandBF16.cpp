//===- ExpandBF16.cpp - bf16 conversions as integer operations -----------===//

#include "compiler/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace sinter::cpu {
#define GEN_PASS_DEF_CPUEXPANDBF16
#include "compiler/Target/CPU/Passes.h.inc"

namespace {

struct CPUExpandBF16 : public impl::CPUExpandBF16Base<CPUExpandBF16> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::cpu
