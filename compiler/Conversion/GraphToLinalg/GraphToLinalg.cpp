//===- GraphToLinalg.cpp - graph ops to linalg/tensor/arith/math ----------===//
//
// The pass: graph-level rewrites first (matmul of a transpose), then a
// partial conversion in which the graph dialect is illegal, with the
// patterns of every op family (Lowering.h). Shapes must be static; a
// dynamic dimension is reported at the op with the way to bind it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "compiler/Conversion/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Train/IR/TrainDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_CONVERTGRAPHTOLINALG
#include "compiler/Conversion/Passes.h.inc"
} // namespace sinter

using namespace mlir;
using namespace sinter::graph;

namespace sinter::lowering {
namespace {

/// Code generation needs every size: report the first dynamic one.
LogicalResult checkStatic(Operation *op) {
  auto dynamic = [](Type t) {
    auto rt = dyn_cast<RankedTensorType>(t);
    return rt && !rt.hasStaticShape();
  };
  if (llvm::any_of(op->getResultTypes(), dynamic) ||
      llvm::any_of(op->getOperandTypes(), dynamic))
    return op->emitError("code generation needs static shapes, but this "
                         "operation has a dynamic dimension; bind B and the "
                         "other shape symbols with --config or -D B=...");
  if (isa<SymbolicSizeOp>(op))
    return op->emitError("code generation needs the shape symbols bound; use "
                         "--config or -D");
  return success();
}

struct ConvertGraphToLinalg
    : public impl::ConvertGraphToLinalgBase<ConvertGraphToLinalg> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    WalkResult checked = module.walk([](Operation *op) {
      if (!isa<GraphDialect>(op->getDialect()))
        return WalkResult::advance();
      if (isa<ModelOp>(op)) {
        op->emitError("run graph-model-to-func before convert-graph-to-linalg");
        return WalkResult::interrupt();
      }
      return failed(checkStatic(op)) ? WalkResult::interrupt()
                                     : WalkResult::advance();
    });
    if (checked.wasInterrupted())
      return signalPassFailure();

    MLIRContext *context = &getContext();
    RewritePatternSet graphRewrites(context);
    populateMatmulOfTransposePatterns(graphRewrites);
    walkAndApplyPatterns(module, std::move(graphRewrites));

    ConversionTarget target(*context);
    target.addIllegalDialect<GraphDialect>();
    target.addLegalDialect<arith::ArithDialect, func::FuncDialect,
                           linalg::LinalgDialect, math::MathDialect,
                           scf::SCFDialect, tensor::TensorDialect,
                           train::TrainDialect>();
    RewritePatternSet patterns(context);
    populateElementwisePatterns(patterns);
    populateShapePatterns(patterns);
    populateLinearPatterns(patterns);
    populateReductionPatterns(patterns);
    populateBatchNormPatterns(patterns);
    populateIndexingPatterns(patterns);
    populateLossPatterns(patterns);
    populateConvolutionPatterns(patterns);
    populateDropoutPatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace sinter::lowering
