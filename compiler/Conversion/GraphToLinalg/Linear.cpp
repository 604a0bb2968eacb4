//===- Linear.cpp - Matmul and attention ----------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::lowering {
namespace {

/// matmul(x, transpose(w)) -> matmul_transposed(x, w), on the graph: the
/// library reads a transposed weight, so no copy of w is made each step.
struct MatmulOfTranspose : public OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto t = op.getRhs().getDefiningOp<TransposeOp>();
    if (!t || t.getPermutation() != ArrayRef<int64_t>{1, 0})
      return failure();
    rewriter.replaceOpWithNewOp<MatmulTransposedOp>(op, op.getType(), op.getLhs(),
                                                    t.getInput());
    if (t->use_empty())
      rewriter.eraseOp(t);
    return success();
  }
};

Results lowerMatmul(TensorBuilder &tb, MatmulOp op, MatmulOp::Adaptor a) {
  return one(tb.matmul(a.getLhs(), a.getRhs(), op.getType().getShape()));
}

Results lowerMatmulTransposed(TensorBuilder &tb, MatmulTransposedOp op,
                              MatmulTransposedOp::Adaptor a) {
  return one(tb.matmulTransposedB(a.getLhs(), a.getRhs(),
                                  cast<RankedTensorType>(op.getType()).getShape()));
}

Results lowerAttention(TensorBuilder &tb, AttentionOp op, AttentionOp::Adaptor a) {
  Value q = a.getQuery(), k = a.getKey(), v = a.getValue();
  ArrayRef<int64_t> qs = shapeOf(q), ks = shapeOf(k);
  int64_t rank = qs.size();
  SmallVector<int64_t> scoreShape(qs.drop_back());
  scoreShape.push_back(ks[rank - 2]);
  Value scores = tb.matmul(q, tb.transposeLast(k), scoreShape);
  scores = tb.scale(scores, 1.0 / std::sqrt(double(qs.back())));
  if (op.getCausal()) {
    // Query i sees keys j <= i (top-left aligned, like is_causal=True).
    Type et = elementOf(scores);
    auto type = cast<RankedTensorType>(scores.getType());
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, tb.builder().getContext());
    scores = indexedMap(
        tb, type, {scores}, {id},
        [&](OpBuilder &b, Location l, ValueRange args, ArrayRef<Value> idx) -> Value {
          Value future = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ugt,
                                               idx[rank - 1], idx[rank - 2]);
          Value ninf = TensorBuilder::scalarAt(
              b, l, -std::numeric_limits<double>::infinity(), et);
          return arith::SelectOp::create(b, l, future, ninf, args[0]);
        });
  }
  Value p = tb.softmax(scores, rank - 1);
  return one(tb.matmul(p, v, op.getType().getShape()));
}

} // namespace

void populateMatmulOfTransposePatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulOfTranspose>(patterns.getContext());
}

void populateLinearPatterns(RewritePatternSet &patterns) {
  addLowering<MatmulOp>(patterns, lowerMatmul);
  addLowering<MatmulTransposedOp>(patterns, lowerMatmulTransposed);
  addLowering<AttentionOp>(patterns, lowerAttention);
}

} // namespace sinter::lowering
