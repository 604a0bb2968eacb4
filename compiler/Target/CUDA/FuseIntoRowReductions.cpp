//===- FuseIntoRowReductions.cpp - A row reduction stores its producer ----===//
//
// GPT-2's residual stream, x = a + b, is stored for the layer norm, the
// next residual add and the backward pass, and the layer norm's statistics
// read it straight back: sum x and sum x^2 over each row. Elementwise fusion
// leaves that pair alone (it fuses into a reduction only a producer nothing
// else reads). Here a row reduction takes such a producer: it reads a and b,
// computes x, folds it into the statistics and stores it, so the loop that
// wrote x and the read of x become one pass. sinter-cuda-block-reductions
// then has each block's threads store the elements they fold.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/Passes.h"
#include "compiler/Target/CUDA/Reductions.h"
#include "compiler/Transforms/FusionConditions.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAFUSEINTOROWREDUCTIONS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

/// Whether every operand of `op` is a tensor of static shape.
bool staticShapes(linalg::GenericOp op) {
  return llvm::all_of(op->getOperandTypes(), [](Type t) {
    auto type = dyn_cast<RankedTensorType>(t);
    return !isa<ShapedType>(t) || (type && type.hasStaticShape());
  });
}

/// Whether `op` will be a block per row (sinter-cuda-block-reductions asks
/// the same of it on buffers): static shapes, its parallel loops first,
/// then at least kMinReducedElements reduced, every output a plain fold
/// (so none moves with the reduced loops), and rows, not columns, read
/// along the reduced loops.
bool isRowReduction(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || !staticShapes(op) || attrs::onlineSoftmax.has(op) ||
      isColumnReduction(op) || !foldsOf(op))
    return false;
  std::optional<std::pair<int64_t, int64_t>> counts = parallelThenReduced(op);
  return counts && counts->second >= kMinReducedElements;
}

/// A row reduction (isRowReduction) and an all-parallel producer of one of
/// its inputs, of static shapes and reading none of its outputs, whose
/// values other ops read later: one loop that computes the producer's
/// values, stores them (outputs it never reads: isStoredOutput), and folds
/// them.
struct StoreProducerInRowReduction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!isRowReduction(consumer))
      return failure();
    for (OpOperand *operand : consumer.getDpsInputOperands()) {
      auto producer = operand->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || producer.getNumLoops() != producer.getNumParallelLoops() ||
          producer->hasOneUse() || !staticShapes(producer) ||
          llvm::any_of(producer.getDpsInitsMutable(),
                       [&](OpOperand &init) {
                         return producer.payloadUsesValueFromOperand(&init);
                       }) ||
          !linalg::areElementwiseOpsFusable(operand) ||
          !readsEachElementOnce(consumer, operand) ||
          !otherUsersFollow(producer, consumer) || !readsOnce(consumer, producer))
        continue;
      if (succeeded(fuseAndReplace(rewriter, operand)))
        return success();
    }
    return failure();
  }
};

struct CUDAFuseIntoRowReductions
    : public impl::CUDAFuseIntoRowReductionsBase<CUDAFuseIntoRowReductions> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StoreProducerInRowReduction>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::cuda
