//===- Loss.cpp - Losses and accuracy -------------------------------------===//
//
// cross_entropy (with label smoothing and ignore_index), nll_loss, the
// elementwise pair losses and accuracy; each applies its reduction.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace sinter::graph;

namespace sinter::lowering {
namespace {

/// `x[..., target]` along the last axis, for targets of shape x.shape[:-1].
Value pickClass(TensorBuilder &tb, Value x, Value target) {
  RankedTensorType xt = typeOf(x);
  int64_t classes = xt.getShape().back();
  auto type = RankedTensorType::get(shapeOf(target), xt.getElementType());
  int64_t rank = type.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, tb.builder().getContext());
  return indexedMap(tb, type, {target}, {id},
                    [&](OpBuilder &b, Location l, ValueRange a,
                        ArrayRef<Value> idx) -> Value {
                      SmallVector<Value> at(idx.begin(), idx.end());
                      at.push_back(clampedIndex(b, l, a[0], classes));
                      return tensor::ExtractOp::create(b, l, x, at);
                    });
}

/// 1 where the target is not `ignore`, else 0, in `type`'s element type.
Value validMask(TensorBuilder &tb, Value target, std::optional<int64_t> ignore,
                Type elementType) {
  int64_t value = ignore ? *ignore : 0;
  bool any = ignore.has_value();
  return tb.elementwise(shapeOf(target), elementType, {target},
                        [=](OpBuilder &b, Location l, ValueRange a) -> Value {
                          if (!any)
                            return TensorBuilder::scalarAt(b, l, 1, elementType);
                          Value ig = TensorBuilder::scalarAt(b, l, value,
                                                             a[0].getType());
                          Value ok = arith::CmpIOp::create(
                              b, l, arith::CmpIPredicate::ne, a[0], ig);
                          return scalar::convert(b, l, ok, elementType);
                        });
}

/// Applies a loss's reduction to per-sample values `perSample` whose valid
/// entries are marked by `mask` (null: all valid).
Value reduceLoss(TensorBuilder &tb, Value perSample, Value mask,
                 StringRef reduction) {
  if (mask)
    perSample = tb.mul(perSample, mask);
  if (reduction == "none")
    return perSample;
  Value sum = tb.reduce(perSample, {}, ReduceKind::Sum, false);
  if (reduction == "sum")
    return sum;
  if (!mask)
    return tb.mean(perSample, {}, false);
  return tb.div(sum, tb.reduce(mask, {}, ReduceKind::Sum, false));
}

Results lowerCrossEntropy(TensorBuilder &tb, Value logits, Value target,
                          StringRef reduction, std::optional<int64_t> ignore,
                          double smoothing, bool inputIsLogProb) {
  int64_t axis = typeOf(logits).getRank() - 1;
  int64_t classes = shapeOf(logits).back();
  Value mask = ignore ? validMask(tb, target, ignore, elementOf(logits)) : Value();
  if (!inputIsLogProb && smoothing == 0) {
    // -logp[t] = -(x[t] - logsumexp(x)): the log-probabilities of every
    // class (a tensor as large as the logits) are never stored.
    Value picked = tb.sub(pickClass(tb, logits, target),
                          tb.logSumExpRows(logits, axis));
    return one(reduceLoss(tb, tb.scale(picked, -1.0), mask, reduction));
  }
  Value logp = inputIsLogProb ? logits : tb.logSoftmax(logits, axis);
  // -(1-e) logp[t] - e/C sum_c logp[c]
  Value picked = pickClass(tb, logp, target);
  Value loss = tb.scale(picked, -(1.0 - smoothing));
  if (smoothing > 0) {
    Value all = tb.reduce(logp, {axis}, ReduceKind::Sum, false);
    loss = tb.sub(loss, tb.scale(all, smoothing / double(classes)));
  }
  return one(reduceLoss(tb, loss, mask, reduction));
}

Results lowerPairLoss(TensorBuilder &tb, Operation *op, Value x, Value y,
                      StringRef reduction) {
  Type et = elementOf(x);
  Value perElement = tb.elementwise(
      shapeOf(x), et, {x, y},
      [op, et](OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isa<MseLossOp>(op)) {
          Value d = scalar::sub(b, l, a[0], a[1]);
          return scalar::mul(b, l, d, d);
        }
        if (isa<L1LossOp>(op))
          return math::AbsFOp::create(b, l, scalar::sub(b, l, a[0], a[1]));
        // bce_with_logits: max(x, 0) - x t + log1p(exp(-|x|)), stable.
        Value zero = TensorBuilder::scalarAt(b, l, 0, et);
        Value pos = scalar::max(b, l, a[0], zero);
        Value xt = scalar::mul(b, l, a[0], a[1]);
        Value e = math::ExpOp::create(
            b, l, arith::NegFOp::create(b, l, math::AbsFOp::create(b, l, a[0])));
        return scalar::add(b, l, scalar::sub(b, l, pos, xt),
                           math::Log1pOp::create(b, l, e));
      });
  return one(reduceLoss(tb, perElement, Value(), reduction));
}

/// Fraction of rows whose first largest logit is the target.
Results lowerAccuracy(TensorBuilder &tb, AccuracyOp op, AccuracyOp::Adaptor ad) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  Value logits = ad.getLogits();
  RankedTensorType lt = typeOf(logits);
  int64_t rank = lt.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<int64_t> rows(lt.getShape().drop_back());
  Type et = lt.getElementType();
  Value best = tb.filled(rows, et, -std::numeric_limits<double>::infinity());
  Value bestIndex = tb.filled(rows, b.getI64Type(), -1);
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 leadingMap(rank, rank - 1, ctx),
                                 leadingMap(rank, rank - 1, ctx)};
  SmallVector<utils::IteratorType> iterators(rank - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto argmax = linalg::GenericOp::create(
      b, loc, TypeRange{best.getType(), bestIndex.getType()}, ValueRange{logits},
      ValueRange{best, bestIndex}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value c = linalg::IndexOp::create(nb, l, rank - 1);
        Value ci = arith::IndexCastOp::create(nb, l, nb.getI64Type(), c);
        // Strictly greater: ties keep the first index, like argmax.
        Value better = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                             a[0], a[1]);
        Value first = arith::CmpIOp::create(
            nb, l, arith::CmpIPredicate::slt, a[2],
            TensorBuilder::scalarAt(nb, l, 0, nb.getI64Type()));
        Value take = arith::OrIOp::create(nb, l, better, first);
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, take, a[0], a[1]),
                       arith::SelectOp::create(nb, l, take, ci, a[2])});
      });
  Value predicted = argmax.getResult(1);
  Type ft = op.getType().getElementType();
  Value correct = tb.elementwise(
      rows, ft, {predicted, ad.getTarget()},
      [ft](OpBuilder &nb, Location l, ValueRange a) {
        Value t = scalar::convert(nb, l, a[1], nb.getI64Type());
        Value eq = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, a[0], t);
        return scalar::convert(nb, l, eq, ft);
      });
  return one(tb.mean(correct, {}, false));
}

Results lowerCrossEntropyOp(TensorBuilder &tb, CrossEntropyOp op,
                            CrossEntropyOp::Adaptor a) {
  return lowerCrossEntropy(tb, a.getLogits(), a.getTarget(), op.getReduction(),
                           op.getIgnoreIndex(),
                           op.getLabelSmoothing().convertToDouble(),
                           /*inputIsLogProb=*/false);
}

Results lowerNllLoss(TensorBuilder &tb, NllLossOp op, NllLossOp::Adaptor a) {
  return lowerCrossEntropy(tb, a.getLogp(), a.getTarget(), op.getReduction(),
                           op.getIgnoreIndex(), 0.0, /*inputIsLogProb=*/true);
}

template <typename OpT>
Results lowerPairLossOp(TensorBuilder &tb, OpT op, typename OpT::Adaptor a) {
  return lowerPairLoss(tb, op, a.getLhs(), a.getRhs(), op.getReduction());
}

} // namespace

void populateLossPatterns(RewritePatternSet &patterns) {
  addLowering<CrossEntropyOp>(patterns, lowerCrossEntropyOp);
  addLowering<NllLossOp>(patterns, lowerNllLoss);
  addLowering<MseLossOp>(patterns, lowerPairLossOp<MseLossOp>);
  addLowering<L1LossOp>(patterns, lowerPairLossOp<L1LossOp>);
  addLowering<BceWithLogitsOp>(patterns, lowerPairLossOp<BceWithLogitsOp>);
  addLowering<AccuracyOp>(patterns, lowerAccuracy);
}

} // namespace sinter::lowering
