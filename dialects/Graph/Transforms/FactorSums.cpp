//===- FactorSums.cpp - Factors out of sums over broadcast axes -----------===//
//
// Gradients of broadcasting ops sum over the broadcast axes
// (`unbroadcast`), and what they sum is often a product with a factor that
// is constant along those axes: batch-norm's gradient of its mean sums
// `-(g * scale)` over the batch and image, where `scale` is per channel.
// Summed as written, the product is made (and stored, when the product has
// other readers) only to be read back by the sum. Taken out of the sum,
// `sum(-(g * s))` is `-(sum(g) * s)`: the sum reads `g`, which other sums
// already read (equal sums are merged), and the product's other readers
// fuse with it. In real arithmetic the two are equal; in float the
// factored form rounds once per channel, not once per element.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace sinter::graph {
#define GEN_PASS_DEF_GRAPHFACTORSUMS
#include "dialects/Graph/Transforms/Passes.h.inc"

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// Whether `factor`, broadcast against a tensor of rank `rank`, has size 1
/// on every axis in `axes` (none: every axis); an axis it lacks counts as
/// size 1.
bool constantAlong(Value factor, int64_t rank, ArrayRef<int64_t> axes) {
  ArrayRef<int64_t> shape = typeOf(factor).getShape();
  int64_t offset = rank - int64_t(shape.size());
  for (int64_t a = 0; a < rank; ++a) {
    bool summed = axes.empty() || llvm::is_contained(axes, a) ||
                  llvm::is_contained(axes, a - rank);
    if (summed && a >= offset && shape[a - offset] != 1)
      return false;
  }
  return true;
}

/// `reduce_sum(neg(x))` is `neg(reduce_sum(x))`.
struct SumOfNegation : OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceSumOp op, PatternRewriter &rewriter) const override {
    auto neg = op.getInput().getDefiningOp<NegOp>();
    if (!neg || !isa<FloatType>(typeOf(neg.getResult()).getElementType()))
      return failure();
    Value sum = ReduceSumOp::create(rewriter, op.getLoc(), neg.getInput(), op.getAxesAttr(),
                                    op.getKeepdimAttr());
    rewriter.replaceOpWithNewOp<NegOp>(op, sum);
    return success();
  }
};

/// `reduce_sum(x * s, axes, keepdim)` with `s` of size 1 along `axes` is
/// `reduce_sum(x, axes, keepdim) * s`. With keepdim the reduced axes stay,
/// so `s` broadcasts against the sum as it did against `x`.
struct SumOfScaled : OpRewritePattern<ReduceSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceSumOp op, PatternRewriter &rewriter) const override {
    auto mul = op.getInput().getDefiningOp<MulOp>();
    if (!mul || !op.getKeepdim())
      return failure();
    RankedTensorType product = typeOf(mul.getResult());
    if (!isa<FloatType>(product.getElementType()) || !product.hasStaticShape())
      return failure();
    int64_t rank = product.getRank();
    // The summed operand has the product's shape; the factor broadcasts.
    for (auto [x, factor] : {std::pair(mul.getLhs(), mul.getRhs()),
                             std::pair(mul.getRhs(), mul.getLhs())}) {
      if (typeOf(x) != product || typeOf(factor) == product ||
          !constantAlong(factor, rank, op.getAxes()))
        continue;
      Value sum = ReduceSumOp::create(rewriter, op.getLoc(), x, op.getAxesAttr(),
                                      op.getKeepdimAttr());
      rewriter.replaceOpWithNewOp<MulOp>(op, sum, factor);
      return success();
    }
    return failure();
  }
};

/// Equal sums (of one value, over the same axes) in a block become the
/// first. Only sums: a general CSE would also merge the elementwise ops
/// that each consumer recomputes (the two `x - mean` of batch-norm's
/// gradient), and a shared value is stored where a recomputed one is not.
void mergeEqualSums(Operation *root) {
  root->walk([](Block *block) {
    llvm::DenseMap<std::tuple<Value, Attribute, Attribute>, ReduceSumOp> first;
    for (Operation &op : llvm::make_early_inc_range(*block)) {
      auto sum = dyn_cast<ReduceSumOp>(op);
      if (!sum)
        continue;
      auto [it, inserted] = first.try_emplace(
          {sum.getInput(), sum.getAxesAttr(), sum.getKeepdimAttr()}, sum);
      if (!inserted) {
        sum.getResult().replaceAllUsesWith(it->second.getResult());
        sum.erase();
      }
    }
  });
}

struct GraphFactorSums : public impl::GraphFactorSumsBase<GraphFactorSums> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SumOfNegation, SumOfScaled>(&getContext());
    // The two rewrites and the dead ops they leave, nothing else: no
    // folding, no merging of constants.
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false).setRegionSimplificationLevel(
        GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
    mergeEqualSums(getOperation());
  }
};

} // namespace
} // namespace sinter::graph
