//===- FoldMatmulTransposes.cpp - Matmuls read transposed operands --------===//

#include "compiler/Target/Host/MatmulForm.h"
#include "compiler/Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace sinter::host {
#define GEN_PASS_DEF_FOLDMATMULTRANSPOSES
#include "compiler/Target/Host/Passes.h.inc"

namespace {

/// The input of a 2-D transpose that swaps the axes.
Value transposed(Value v) {
  auto t = v.getDefiningOp<linalg::TransposeOp>();
  if (!t || t.getPermutation() != ArrayRef<int64_t>{1, 0})
    return Value();
  return t.getInput();
}

linalg::MatmulOp createMatmul(PatternRewriter &rewriter, Location loc, Value a,
                              Value b, Value init, MatmulForm f) {
  auto mm = linalg::MatmulOp::create(rewriter, loc, TypeRange{init.getType()},
                                     ValueRange{a, b}, ValueRange{init});
  mm.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(matmulMaps(loc.getContext(), f)));
  return mm;
}

/// matmul(transpose(X), B) reads X transposed (and the same for B).
struct FoldOperandTranspose : OpRewritePattern<linalg::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<MatmulForm> form = matmulFormOf(op);
    if (!form || !op.hasPureTensorSemantics())
      return failure();
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
    Value ta = transposed(a), tb = transposed(b);
    if (!ta && !tb)
      return failure();
    MatmulForm f = *form;
    if (ta) {
      a = ta;
      f.transposedA = !f.transposedA;
    }
    if (tb) {
      b = tb;
      f.transposedB = !f.transposedB;
    }
    rewriter.replaceOp(op, createMatmul(rewriter, op.getLoc(), a, b,
                                        op.getDpsInits()[0], f)->getResults());
    return success();
  }
};

/// transpose(A · B) = B^T · A^T, for a product onto zeros read only there.
struct FoldResultTranspose : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getPermutation() != ArrayRef<int64_t>{1, 0} || !op.hasPureTensorSemantics())
      return failure();
    auto mm = op.getInput().getDefiningOp<linalg::MatmulOp>();
    std::optional<MatmulForm> form = mm ? matmulFormOf(mm) : std::nullopt;
    if (!form || !mm->hasOneUse() || !isZeros(mm.getDpsInits()[0]))
      return failure();
    Location loc = op.getLoc();
    Value zero = mm.getDpsInits()[0].getDefiningOp<linalg::FillOp>().getInputs()[0];
    Value init = linalg::FillOp::create(rewriter, loc, zero, op.getInit()).getResult(0);
    MatmulForm f{!form->transposedB, !form->transposedA};
    rewriter.replaceOp(op, createMatmul(rewriter, loc, mm.getDpsInputs()[1],
                                        mm.getDpsInputs()[0], init, f)->getResults());
    return success();
  }
};

struct FoldMatmulTransposes
    : public impl::FoldMatmulTransposesBase<FoldMatmulTransposes> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldOperandTranspose, FoldResultTranspose>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::host
