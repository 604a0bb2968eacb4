//===- GraphGradientsNN.cpp - Gradients of network primitives and losses --===//
//
// GradientOpInterface for the neural-network primitives (pooling,
// normalization statistics, batch norm, convolution, dropout, embedding,
// attention) and the losses, and the spelled-out attention gradient; the
// conventions and the shared helpers are those of GraphGradients.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphGradientsInternal.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;

namespace sinter::graph {

//===----------------------------------------------------------------------===//
// Neural-network primitives
//===----------------------------------------------------------------------===//

GRADIENT(GlobalAvgPool2dOp) {
  Location l = getLoc();
  RankedTensorType in = typeOf(getInput());
  // Each channel's gradient, shared by the H x W positions it averaged.
  bool last = getChannelsLast();
  int64_t n = in.getDimSize(0), c = in.getDimSize(last ? 3 : 1);
  int64_t hw = last ? in.getDimSize(1) * in.getDimSize(2)
                    : in.getDimSize(2) * in.getDimSize(3);
  SmallVector<int64_t> view = last ? SmallVector<int64_t>{n, 1, 1, c}
                                   : SmallVector<int64_t>{n, c, 1, 1};
  Value g = ReshapeOp::create(b, l, RankedTensorType::get(view, in.getElementType()),
                              rg[0]);
  g = mul(b, l, g, scalar(b, l, 1.0 / double(hw), g));
  og.push_back(broadcastTo(b, l, g, in));
  return success();
}

/// Mean and biased variance over `axes`: d mean / dx = 1/n,
/// d var / dx = 2 (x - mean) / n.
static void statsGradient(OpBuilder &b, Location l, Value x, Value mean,
                          ArrayRef<Value> rg, ArrayRef<int64_t> axes,
                          bool keepdim, SmallVectorImpl<Value> &og) {
  double n = double(countOf(x, axes));
  Value total;
  if (rg[0]) {
    Value gm = keepReducedAxes(b, l, rg[0], x, axes, keepdim);
    total = broadcastTo(b, l, mul(b, l, gm, scalar(b, l, 1 / n, gm)), typeOf(x));
  }
  if (rg[1]) {
    Value gv = keepReducedAxes(b, l, rg[1], x, axes, keepdim);
    Value m = keepReducedAxes(b, l, mean, x, axes, keepdim);
    Value d = mul(b, l, mul(b, l, sub(b, l, x, m), gv), scalar(b, l, 2 / n, gv));
    total = total ? add(b, l, total, d) : d;
  }
  og.push_back(total);
}

GRADIENT(BatchNormStatsOp) {
  statsGradient(b, getLoc(), getInput(), getMean(), rg, getAxes(), false, og);
  return success();
}

GRADIENT(BatchNormOp) {
  // Whole, for the device library that made the op worth fusing.
  Location l = getLoc();
  Value dx, dweight, dbias;
  if (rg[0]) {
    auto grads = BatchNormGradOp::create(b, l, getInput(), getWeight(), getMean(),
                                         getVar(), rg[0], getEpsilonAttr());
    dx = grads.getDinput();
    dweight = grads.getDweight();
    dbias = grads.getDbias();
  }
  // The statistics it returns, where the model reads them beyond the
  // normalization (not the running statistics' update, which has none).
  if (rg[1] || rg[2]) {
    SmallVector<int64_t> axes = {0};
    for (int64_t i = 2; i < typeOf(getInput()).getRank(); ++i)
      axes.push_back(i);
    SmallVector<Value, 1> stats;
    statsGradient(b, l, getInput(), getMean(), rg.drop_front(), axes, false, stats);
    dx = dx ? add(b, l, dx, stats[0]) : stats[0];
  }
  og.append({dx, dweight, dbias});
  return success();
}

GRADIENT(LayerNormStatsOp) {
  int64_t last = typeOf(getInput()).getRank() - 1;
  statsGradient(b, getLoc(), getInput(), getMean(), rg, {last}, true, og);
  return success();
}

GRADIENT(Conv2dOp) {
  Location l = getLoc();
  Value g = rg[0];
  og.push_back(Conv2dGradInputOp::create(
      b, l, getInput().getType(), g, getWeight(), getStrideAttr(),
      getPaddingAttr(), getDilationAttr(), getChannelsLastAttr(), getGroupsAttr()));
  og.push_back(Conv2dGradWeightOp::create(
      b, l, getWeight().getType(), getInput(), g, getStrideAttr(),
      getPaddingAttr(), getDilationAttr(), getChannelsLastAttr(), getGroupsAttr()));
  return success();
}

GRADIENT(MaxPool2dOp) {
  og.push_back(Pool2dGradOp::create(b, getLoc(), getInput().getType(),
                                    getInput(), rg[0], getKernelAttr(),
                                    getStrideAttr(), getPaddingAttr(),
                                    b.getBoolAttr(true), getChannelsLastAttr()));
  return success();
}

GRADIENT(AvgPool2dOp) {
  og.push_back(Pool2dGradOp::create(b, getLoc(), getInput().getType(),
                                    getInput(), rg[0], getKernelAttr(),
                                    getStrideAttr(), getPaddingAttr(),
                                    b.getBoolAttr(false), getChannelsLastAttr()));
  return success();
}

GRADIENT(DropoutOp) {
  // The same mask scales the gradient: a dropout of it with this stream.
  og.push_back(DropoutOp::create(b, getLoc(), rg[0].getType(), rg[0],
                                 getOffset(), getPAttr(), getStreamAttr()));
  if (getOffset())
    og.push_back(Value());
  return success();
}

GRADIENT(BatchNormCountOp) {
  og.push_back(Value()); // a count: constant in the input's values
  return success();
}

GRADIENT(AllReduceSumOp) {
  og.push_back(AllReduceSumOp::create(b, getLoc(), rg[0]));
  return success();
}

GRADIENT(EmbeddingOp) {
  og.push_back(Value());
  og.push_back(EmbeddingGradOp::create(b, getLoc(), getTable().getType(),
                                       getIds(), rg[0]));
  return success();
}

SmallVector<Value, 3> spellOutAttentionGrad(OpBuilder &b, AttentionGradOp op) {
  Location l = op.getLoc();
  Value q = op.getQuery(), k = op.getKey(), v = op.getValue(), g = op.getGrad();
  RankedTensorType qt = typeOf(q);
  int64_t rank = qt.getRank();
  double scale = 1.0 / std::sqrt(double(qt.getShape().back()));
  Value s = mul(b, l, MatmulOp::create(b, l, q, swapLast(b, l, k)),
                scalar(b, l, scale, q));
  if (op.getCausal()) {
    RankedTensorType st = typeOf(s);
    int64_t rows = st.getDimSize(rank - 2), cols = st.getDimSize(rank - 1);
    SmallVector<bool> future;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        future.push_back(j > i);
    auto maskType = RankedTensorType::get({rows, cols}, b.getI1Type());
    Value mask = ConstantOp::create(b, l, DenseElementsAttr::get(maskType, future));
    s = WhereOp::create(b, l, mask, scalar(b, l, -INFINITY, s), s);
  }
  Value p = SoftmaxOp::create(b, l, s, rank - 1);
  Value dp = MatmulOp::create(b, l, g, swapLast(b, l, v));
  SmallVector<int64_t> last = {rank - 1};
  Value dot = ReduceSumOp::create(b, l, mul(b, l, dp, p),
                                  b.getDenseI64ArrayAttr(last), b.getBoolAttr(true));
  Value ds = mul(b, l, mul(b, l, p, sub(b, l, dp, dot)), scalar(b, l, scale, p));
  return {MatmulOp::create(b, l, ds, k), MatmulOp::create(b, l, swapLast(b, l, ds), q),
          MatmulOp::create(b, l, swapLast(b, l, p), g)};
}

GRADIENT(AttentionOp) {
  // Whole: a device's library may differentiate attention itself;
  // graph-expand-attention-grad spells it out elsewhere.
  auto grads = AttentionGradOp::create(b, getLoc(), getQuery(), getKey(), getValue(),
                                       rg[0], getCausalAttr());
  og.push_back(grads.getDquery());
  og.push_back(grads.getDkey());
  og.push_back(grads.getDvalue());
  return success();
}

GRADIENT(AttentionQkvOp) {
  // The statistics are the library's own, for the gradient below.
  if (rg[1])
    return emitOpError("has no gradient for its row statistics");
  if (!rg[0]) {
    og.push_back(Value());
    return success();
  }
  auto grad = AttentionQkvGradOp::create(b, getLoc(), getQkv(), getResult(), getLse(),
                                         rg[0], getHeadsAttr(), getCausalAttr());
  og.push_back(grad.getDqkv());
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// The per-sample weight of a class loss's gradient: the mask of valid
/// targets, times 1/(number of valid targets) for "mean", times the incoming
/// gradient (a scalar, or per sample for "none").
static Value lossWeight(OpBuilder &b, Location l, Value target, Value like,
                        std::optional<int64_t> ignore, StringRef reduction,
                        Value g) {
  auto perSample = RankedTensorType::get(typeOf(target).getShape(),
                                         typeOf(like).getElementType());
  Value mask = broadcastTo(b, l, scalar(b, l, 1, like), perSample);
  if (ignore)
    mask = asFloat(b, l, cmp(b, l, target, scalar(b, l, double(*ignore), target),
                              "ne"),
                   like);
  Value w = mul(b, l, mask, g);
  if (reduction == "mean") {
    Value count = ReduceSumOp::create(b, l, mask, b.getDenseI64ArrayAttr({}),
                                      b.getBoolAttr(false));
    w = div(b, l, w, count);
  }
  return w;
}

/// One-hot targets in the logits' type, shaped like the logits.
static Value oneHotLike(OpBuilder &b, Location l, Value target, Value logits) {
  RankedTensorType lt = typeOf(logits);
  auto f32 = RankedTensorType::get(lt.getShape(), b.getF32Type());
  Value hot = OneHotOp::create(b, l, f32, target, lt.getShape().back());
  if (lt.getElementType().isF32())
    return hot;
  return CastOp::create(b, l, lt, hot);
}

/// Appends a trailing size-1 axis so a per-sample weight broadcasts over
/// the class axis.
static Value perRow(OpBuilder &b, Location l, Value w) {
  RankedTensorType t = typeOf(w);
  SmallVector<int64_t> shape(t.getShape());
  shape.push_back(1);
  return ReshapeOp::create(b, l, RankedTensorType::get(shape, t.getElementType()),
                           w);
}

GRADIENT(CrossEntropyOp) {
  Location l = getLoc();
  Value logits = getLogits(), target = getTarget();
  double eps = getLabelSmoothing().convertToDouble();
  int64_t classes = typeOf(logits).getShape().back();
  int64_t axis = typeOf(logits).getRank() - 1;
  // d/dlogits = softmax - ((1 - eps) onehot + eps / C), per valid sample.
  Value p = SoftmaxOp::create(b, l, logits, axis);
  Value hot = oneHotLike(b, l, target, logits);
  Value goal = add(b, l, mul(b, l, hot, scalar(b, l, 1 - eps, logits)),
                   scalar(b, l, eps / double(classes), logits));
  Value w = lossWeight(b, l, target, logits, getIgnoreIndex(), getReduction(),
                       rg[0]);
  og.push_back(mul(b, l, sub(b, l, p, goal), perRow(b, l, w)));
  og.push_back(Value());
  return success();
}

GRADIENT(NllLossOp) {
  Location l = getLoc();
  Value logp = getLogp(), target = getTarget();
  Value hot = oneHotLike(b, l, target, logp);
  Value w = lossWeight(b, l, target, logp, getIgnoreIndex(), getReduction(),
                       rg[0]);
  og.push_back(neg(b, l, mul(b, l, hot, perRow(b, l, w))));
  og.push_back(Value());
  return success();
}

/// mse, l1 and bce: d/dx of the per-element loss times the reduction's
/// scale; the target's gradient is the negative (mse, l1) or -x (bce).
static Value pairScale(OpBuilder &b, Location l, Value x, StringRef reduction,
                       Value g) {
  if (reduction != "mean")
    return g;
  double n = double(typeOf(x).getNumElements());
  return mul(b, l, g, scalar(b, l, 1 / n, g));
}

GRADIENT(MseLossOp) {
  Location l = getLoc();
  Value d = sub(b, l, getLhs(), getRhs());
  Value g = mul(b, l, mul(b, l, d, scalar(b, l, 2, d)),
                pairScale(b, l, getLhs(), getReduction(), rg[0]));
  og.push_back(g);
  og.push_back(neg(b, l, g));
  return success();
}

GRADIENT(L1LossOp) {
  Location l = getLoc();
  Value d = sub(b, l, getLhs(), getRhs());
  Value zero = scalar(b, l, 0, d);
  Value sign = sub(b, l, asFloat(b, l, cmp(b, l, d, zero, "gt"), d),
                   asFloat(b, l, cmp(b, l, d, zero, "lt"), d));
  Value g = mul(b, l, sign, pairScale(b, l, getLhs(), getReduction(), rg[0]));
  og.push_back(g);
  og.push_back(neg(b, l, g));
  return success();
}

GRADIENT(BceWithLogitsOp) {
  Location l = getLoc();
  Value x = getLhs(), t = getRhs();
  Value scale = pairScale(b, l, x, getReduction(), rg[0]);
  og.push_back(mul(b, l, sub(b, l, SigmoidOp::create(b, l, x), t), scale));
  og.push_back(mul(b, l, neg(b, l, x), scale));
  return success();
}

#undef GRADIENT

} // namespace sinter::graph
