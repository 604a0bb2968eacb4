//===- MatmulBias.cpp - A bias added by the matmul that makes its sum -----===//
//
// x·W + b is a product onto zeros and a loop that reads it back to add b.
// The product onto b's rows means the same (linalg.matmul adds into its
// init), and the library adds b as it writes the product (cuBLASLt's bias
// epilogue), so the loop drops the add; one that then only copies its
// input goes too. GPT-2's query-key-value projection loses its own loop;
// the MLP's first projection keeps its GELU loop, which no longer writes
// the sum back. The loop may be a reduction that stores the sum as it
// folds it (a layer norm's statistics fused with the residual add).
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/MatmulForm.h"
#include "compiler/Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace sinter::host {
#define GEN_PASS_DEF_MATMULBIAS
#include "compiler/Target/Host/Passes.h.inc"

namespace {

/// The f32 product onto zeros that `v` is, directly or through an
/// expand_shape that keeps its columns as the last dimension, if nothing
/// else reads it.
linalg::MatmulOp productOf(Value v) {
  if (!v.hasOneUse())
    return {};
  if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>()) {
    auto groups = expand.getReassociationIndices();
    if (groups.back().size() != 1)
      return {};
    v = expand.getSrc();
    if (!v.hasOneUse())
      return {};
  }
  auto mm = v.getDefiningOp<linalg::MatmulOp>();
  if (!mm || !mm.hasPureTensorSemantics() || !matmulFormOf(mm) ||
      !isZeros(mm.getDpsInits()[0]) ||
      !cast<ShapedType>(v.getType()).getElementType().isF32())
    return {};
  return mm;
}

/// Whether `map` reads only the last of its loops (a bias along columns).
bool readsLastLoopOnly(AffineMap map) {
  return map.getNumResults() == 1 &&
         map.getResult(0) == getAffineDimExpr(map.getNumDims() - 1, map.getContext());
}

/// In a loop (elementwise, or a reduction that reads the product at every
/// loop), `product + bias`, the product a matmul onto zeros read at the
/// same place: the matmul starts from the bias's rows instead, and the loop
/// reads the sum.
struct BiasIntoMatmul : OpRewritePattern<linalg::GenericOp> {
  BiasIntoMatmul(MLIRContext *ctx, DominanceInfo &dominance)
      : OpRewritePattern(ctx), dominance(dominance) {}

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    // The product is read at the identity map below: each element once, in
    // a reduction too (a row's statistics that store the biased sum).
    if (!op.hasPureTensorSemantics())
      return failure();
    Block &body = op.getRegion().front();
    for (OpOperand *in : op.getDpsInputOperands()) {
      linalg::MatmulOp mm = productOf(in->get());
      if (!mm || !op.getMatchingIndexingMap(in).isIdentity())
        continue;
      BlockArgument sum = op.getMatchingBlockArgument(in);
      if (!sum.hasOneUse())
        continue;
      auto add = dyn_cast<arith::AddFOp>(*sum.user_begin());
      if (!add)
        continue;
      Value other = add.getLhs() == sum ? add.getRhs() : add.getLhs();
      auto biasArg = dyn_cast<BlockArgument>(other);
      if (!biasArg || biasArg.getOwner() != &body ||
          biasArg.getArgNumber() >= op.getNumDpsInputs())
        continue;
      OpOperand *biasIn = op.getDpsInputOperand(biasArg.getArgNumber());
      Value bias = biasIn->get();
      auto biasType = dyn_cast<RankedTensorType>(bias.getType());
      auto productType = cast<RankedTensorType>(mm.getResult(0).getType());
      if (!readsLastLoopOnly(op.getMatchingIndexingMap(biasIn)) || !biasType ||
          !productType.hasStaticShape() || biasType.getRank() != 1 ||
          biasType.getElementType() != productType.getElementType() ||
          biasType.getDimSize(0) != productType.getDimSize(1) ||
          !dominance.properlyDominates(bias, mm))
        continue;
      // The product starts from the bias's rows.
      rewriter.setInsertionPoint(mm);
      Value rows = tensor::EmptyOp::create(rewriter, mm.getLoc(), productType.getShape(),
                                           productType.getElementType());
      Value broadcast = linalg::BroadcastOp::create(rewriter, mm.getLoc(), bias, rows,
                                                    ArrayRef<int64_t>{0})
                            ->getResult(0);
      Operation *zeros = mm.getDpsInits()[0].getDefiningOp();
      rewriter.modifyOpInPlace(mm, [&] { mm.getDpsInitsMutable()[0].set(broadcast); });
      if (zeros->use_empty())
        rewriter.eraseOp(zeros);
      rewriter.replaceOp(add, sum);
      return success();
    }
    return failure();
  }

  DominanceInfo &dominance;
};

/// A loop result that is one of its inputs, read where it is written, is
/// that input.
struct ForwardedResults : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    auto yield = cast<linalg::YieldOp>(op.getRegion().front().getTerminator());
    bool changed = false;
    for (auto [index, result] : llvm::enumerate(op.getResults())) {
      auto arg = dyn_cast<BlockArgument>(yield.getOperand(index));
      if (result.use_empty() || !arg || arg.getOwner() != yield->getBlock() ||
          arg.getArgNumber() >= op.getNumDpsInputs())
        continue;
      OpOperand *in = op.getDpsInputOperand(arg.getArgNumber());
      OpOperand *out = op.getDpsInitOperand(index);
      if (in->get().getType() != result.getType() ||
          op.getMatchingIndexingMap(in) != op.getMatchingIndexingMap(out) ||
          !op.getMatchingIndexingMap(out).isIdentity())
        continue;
      rewriter.replaceAllUsesWith(result, in->get());
      changed = true;
    }
    return success(changed);
  }
};

struct MatmulBias : public impl::MatmulBiasBase<MatmulBias> {
  void runOnOperation() override {
    DominanceInfo dominance(getOperation());
    RewritePatternSet patterns(&getContext());
    patterns.add<BiasIntoMatmul>(&getContext(), dominance);
    patterns.add<ForwardedResults>(&getContext());
    // The bias operands and copied results left unused.
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::host
