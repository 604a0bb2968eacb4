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

/// `f` with A's and B's storage flipped where asked: a product that reads
/// an operand's transpose in place reads it the other way round.
MatmulForm swapped(MatmulForm f, bool a, bool b) {
  return {f.transposedA != a, f.transposedB != b};
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
    MatmulForm f = swapped(*form, bool(ta), bool(tb));
    a = ta ? ta : a;
    b = tb ? tb : b;
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

/// Whether `op` copies its input with the last two axes swapped: a
/// linalg.transpose, or the linalg.generic that copies through the
/// permutation (the graph lowering's form).
bool swapsLastTwoAxes(Operation *op) {
  auto lastTwoSwapped = [](int64_t rank) {
    SmallVector<int64_t> p = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(p[rank - 1], p[rank - 2]);
    return p;
  };
  if (auto t = dyn_cast_or_null<linalg::TransposeOp>(op))
    return t.getPermutation().size() >= 3 &&
           t.getPermutation() == ArrayRef<int64_t>(lastTwoSwapped(t.getPermutation().size()));
  auto g = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumReductionLoops() != 0 || g.getNumLoops() < 3 || !g.hasPureTensorSemantics())
    return false;
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  if (yield.getNumOperands() != 1 || yield.getOperand(0) != g.getBody()->getArgument(0))
    return false;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  return maps[1].isIdentity() &&
         maps[0] == AffineMap::getPermutationMap(lastTwoSwapped(g.getNumLoops()), g.getContext());
}

/// The tensor whose last two axes `v` ([batch, rows, cols]) holds swapped:
/// a copy that swaps them, possibly with its leading axes collapsed into
/// the batch after it (then collapsed the same way here).
Value swappedSource(PatternRewriter &rewriter, Value v) {
  Operation *copy = v.getDefiningOp();
  auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(copy);
  if (collapse) {
    // [[0, ..., r-3], [r-2], [r-1]]: only the leading axes merge.
    SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
    int64_t rank = collapse.getSrcType().getRank();
    if (groups.size() != 3 || groups[1] != ReassociationIndices{rank - 2} ||
        groups[2] != ReassociationIndices{rank - 1})
      return Value();
    copy = collapse.getSrc().getDefiningOp();
  }
  if (!swapsLastTwoAxes(copy))
    return Value();
  Value source = copy->getOperand(0);
  if (!collapse)
    return cast<RankedTensorType>(source.getType()).getRank() == 3 ? source : Value();
  rewriter.setInsertionPointAfterValue(source);
  return tensor::CollapseShapeOp::create(rewriter, collapse.getLoc(), source,
                                         collapse.getReassociationIndices());
}

/// batch_matmul(swap(X), B) reads X with its last two axes swapped (and
/// the same for B): attention's backward pass multiplies by the scores'
/// gradient and the probabilities transposed, [batch, T, T] each.
struct FoldBatchOperandTranspose : OpRewritePattern<linalg::BatchMatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::BatchMatmulOp op,
                                PatternRewriter &rewriter) const override {
    std::optional<MatmulForm> form = batchMatmulFormOf(op);
    if (!form || !op.hasPureTensorSemantics())
      return failure();
    OpBuilder::InsertionGuard guard(rewriter);
    Value a = swappedSource(rewriter, op.getDpsInputs()[0]);
    Value b = swappedSource(rewriter, op.getDpsInputs()[1]);
    if (!a && !b)
      return failure();
    MatmulForm f = swapped(*form, bool(a), bool(b));
    rewriter.setInsertionPoint(op);
    auto made = linalg::BatchMatmulOp::create(
        rewriter, op.getLoc(), op->getResultTypes(),
        ValueRange{a ? a : op.getDpsInputs()[0], b ? b : op.getDpsInputs()[1]},
        ValueRange{op.getDpsInits()[0]});
    made.setIndexingMapsAttr(
        rewriter.getAffineMapArrayAttr(batchMatmulMaps(op.getContext(), f)));
    rewriter.replaceOp(op, made->getResults());
    return success();
  }
};

struct FoldMatmulTransposes
    : public impl::FoldMatmulTransposesBase<FoldMatmulTransposes> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldOperandTranspose, FoldResultTranspose>(&getContext());
    if (batched)
      patterns.add<FoldBatchOperandTranspose>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::host
