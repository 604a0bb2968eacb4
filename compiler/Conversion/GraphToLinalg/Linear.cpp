//===- Linear.cpp - Matmul and attention ----------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sinter/IR/SinterAttrs.h"
#include "dialects/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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

/// The device's fused attention (attrs::fusesAttention): the operands in
/// the type it takes (rounded to bf16 for cuDNN's), the library op, its
/// results back in the graph's type.
template <typename LibraryOp>
SmallVector<Value> fusedAttention(TensorBuilder &tb, Operation *graphOp, ValueRange operands,
                                  TypeRange resultTypes, bool causal) {
  OpBuilder &b = tb.builder();
  Type element = attrs::fusedAttentionType(graphOp);
  SmallVector<Value> inputs;
  for (Value v : operands)
    inputs.push_back(tb.convert(v, element));
  SmallVector<Type> libraryTypes;
  for (Type t : resultTypes)
    libraryTypes.push_back(cast<RankedTensorType>(t).clone(element));
  auto op = LibraryOp::create(b, tb.location(), libraryTypes, inputs, ValueRange(),
                              b.getBoolAttr(causal));
  SmallVector<Value> out;
  for (auto [result, type] : llvm::zip(op.getResults(), resultTypes))
    out.push_back(tb.convert(result, cast<RankedTensorType>(type).getElementType()));
  return out;
}

Results lowerAttentionGrad(TensorBuilder &tb, AttentionGradOp op,
                           AttentionGradOp::Adaptor a) {
  // Elsewhere graph-expand-attention-grad has spelled it out.
  if (!attrs::fusesAttention(op))
    return op.emitError("internal error: graph.attention_grad left for a target "
                        "without fused attention (run graph-expand-attention-grad)");
  return fusedAttention<train::AttentionBackwardOp>(
      tb, op, {a.getQuery(), a.getKey(), a.getValue(), a.getGrad()}, op->getResultTypes(),
      op.getCausal());
}

Results lowerAttention(TensorBuilder &tb, AttentionOp op, AttentionOp::Adaptor a) {
  Value q = a.getQuery(), k = a.getKey(), v = a.getValue();
  if (attrs::fusesAttention(op))
    return fusedAttention<train::AttentionForwardOp>(tb, op, {q, k, v}, {op.getType()},
                                                    op.getCausal());
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

/// graph-pack-attention made it only where the device's library attends
/// (attrs::fusesAttention):
/// q, k and v read from the projection in place. The row statistics are
/// asked for only when the gradient reads them.
Results lowerAttentionQkv(TensorBuilder &tb, AttentionQkvOp op, AttentionQkvOp::Adaptor a) {
  OpBuilder &b = tb.builder();
  Type element = attrs::fusedAttentionType(op);
  Value qkv = tb.convert(a.getQkv(), element);
  RankedTensorType y = op.getResult().getType(), lse = op.getLse().getType();
  SmallVector<Type> types = {y.clone(element)};
  bool keepsStatistics = !op.getLse().use_empty();
  if (keepsStatistics)
    types.push_back(lse);
  auto call = train::AttentionQkvForwardOp::create(b, tb.location(), types, qkv,
                                                   ValueRange(), op.getHeadsAttr(),
                                                   op.getCausalAttr());
  // Without a reader the statistics are not made: an empty stands for them.
  Value statistics = keepsStatistics ? call.getResult(1)
                                     : tensor::EmptyOp::create(b, tb.location(),
                                                               lse.getShape(),
                                                               lse.getElementType());
  return SmallVector<Value>{tb.convert(call.getResult(0), y.getElementType()), statistics};
}

Results lowerAttentionQkvGrad(TensorBuilder &tb, AttentionQkvGradOp op,
                              AttentionQkvGradOp::Adaptor a) {
  OpBuilder &b = tb.builder();
  Type element = attrs::fusedAttentionType(op);
  SmallVector<Value> inputs = {tb.convert(a.getQkv(), element),
                               tb.convert(a.getResult(), element), a.getLse(),
                               tb.convert(a.getGrad(), element)};
  auto call = train::AttentionQkvBackwardOp::create(
      b, tb.location(), TypeRange{op.getType().clone(element)}, inputs, ValueRange(),
      op.getHeadsAttr(), op.getCausalAttr());
  return one(tb.convert(call.getResult(0), op.getType().getElementType()));
}

} // namespace

void populateMatmulOfTransposePatterns(RewritePatternSet &patterns) {
  patterns.add<MatmulOfTranspose>(patterns.getContext());
}

void populateLinearPatterns(RewritePatternSet &patterns) {
  addLowering<MatmulOp>(patterns, lowerMatmul);
  addLowering<MatmulTransposedOp>(patterns, lowerMatmulTransposed);
  addLowering<AttentionOp>(patterns, lowerAttention);
  addLowering<AttentionGradOp>(patterns, lowerAttentionGrad);
  addLowering<AttentionQkvOp>(patterns, lowerAttentionQkv);
  addLowering<AttentionQkvGradOp>(patterns, lowerAttentionQkvGrad);
}

} // namespace sinter::lowering
