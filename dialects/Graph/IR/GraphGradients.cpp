//===- GraphGradients.cpp - Vector-Jacobian products of the graph ops -----===//
//
// GradientOpInterface for every differentiable op: the gradient of the loss
// with respect to each operand, built from graph ops at the op's location.
// Broadcasting is undone by summing over the broadcast axes. Conventions are
// PyTorch's where they differ from calculus at kinks: relu'(0) = 0,
// |x|'(0) = 0, ties of maximum/minimum share the gradient equally, ties of a
// max/min reduction too (amax).
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;

namespace sinter::graph {
namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// A rank-0 constant of `like`'s element type.
Value scalar(OpBuilder &b, Location loc, double v, Value like) {
  Type et = typeOf(like).getElementType();
  auto type = RankedTensorType::get({}, et);
  Attribute value = isa<FloatType>(et)
                        ? Attribute(b.getFloatAttr(et, v))
                        : Attribute(b.getIntegerAttr(et, int64_t(v)));
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, value));
}

Value add(OpBuilder &b, Location l, Value x, Value y) { return AddOp::create(b, l, x, y); }
Value sub(OpBuilder &b, Location l, Value x, Value y) { return SubOp::create(b, l, x, y); }
Value mul(OpBuilder &b, Location l, Value x, Value y) { return MulOp::create(b, l, x, y); }
Value div(OpBuilder &b, Location l, Value x, Value y) { return DivOp::create(b, l, x, y); }
Value neg(OpBuilder &b, Location l, Value x) { return NegOp::create(b, l, x); }
Value cmp(OpBuilder &b, Location l, Value x, Value y, StringRef p) {
  return CompareOp::create(b, l, x, y, p);
}
/// A bool mask as 0/1 of `like`'s element type.
Value asFloat(OpBuilder &b, Location l, Value mask, Value like) {
  auto t = RankedTensorType::get(typeOf(mask).getShape(),
                                 typeOf(like).getElementType());
  return CastOp::create(b, l, t, mask);
}

/// Sums `g` (of a broadcast result) back to `target`'s shape.
Value unbroadcast(OpBuilder &b, Location loc, Value g, Type target) {
  auto tt = cast<RankedTensorType>(target);
  ArrayRef<int64_t> gs = typeOf(g).getShape(), ts = tt.getShape();
  if (gs == ts)
    return g;
  SmallVector<int64_t> axes;
  int64_t offset = gs.size() - ts.size();
  for (int64_t i = 0; i < int64_t(gs.size()); ++i)
    if (i < offset || (ts[i - offset] == 1 && gs[i] != 1))
      axes.push_back(i);
  Value r = g;
  if (!axes.empty())
    r = ReduceSumOp::create(b, loc, g, b.getDenseI64ArrayAttr(axes),
                            b.getBoolAttr(true));
  if (typeOf(r).getShape() == ts)
    return r;
  return ReshapeOp::create(b, loc, tt, r);
}

/// `g` broadcast to `shape` (for gradients of reductions).
Value broadcastTo(OpBuilder &b, Location loc, Value g, RankedTensorType type) {
  Value zeros = ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 0.0)));
  return add(b, loc, zeros, g);
}

/// A reduction's result gradient reshaped so it broadcasts against its
/// input: size-1 at every reduced axis.
Value keepReducedAxes(OpBuilder &b, Location loc, Value g, Value input,
                      ArrayRef<int64_t> axes, bool keepdim) {
  if (keepdim)
    return g;
  RankedTensorType in = typeOf(input);
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i)
    shape.push_back(axes.empty() || llvm::is_contained(axes, i)
                        ? 1
                        : in.getDimSize(i));
  return ReshapeOp::create(
      b, loc, RankedTensorType::get(shape, in.getElementType()), g);
}

int64_t countOf(Value input, ArrayRef<int64_t> axes) {
  RankedTensorType in = typeOf(input);
  int64_t n = 1;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (axes.empty() || llvm::is_contained(axes, i))
      n *= in.getDimSize(i);
  return n;
}

/// x @ transpose(y) style helpers for matmul's gradient.
Value swapLast(OpBuilder &b, Location loc, Value v) {
  int64_t rank = typeOf(v).getRank();
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return TransposeOp::create(b, loc, v, b.getDenseI64ArrayAttr(perm));
}

/// `v` [..., rows, cols] with its leading dimensions folded into the rows:
/// [everything / cols, cols].
Value foldIntoRows(OpBuilder &b, Location loc, Value v) {
  RankedTensorType t = typeOf(v);
  int64_t cols = t.getShape().back();
  return ReshapeOp::create(
      b, loc, RankedTensorType::get({t.getNumElements() / cols, cols}, t.getElementType()),
      v);
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

#define GRADIENT(OP)                                                           \
  LogicalResult OP::buildGradients(OpBuilder &b, ArrayRef<Value> rg,          \
                                   SmallVectorImpl<Value> &og)

GRADIENT(AddOp) {
  og.push_back(unbroadcast(b, getLoc(), rg[0], getLhs().getType()));
  og.push_back(unbroadcast(b, getLoc(), rg[0], getRhs().getType()));
  return success();
}

GRADIENT(SubOp) {
  og.push_back(unbroadcast(b, getLoc(), rg[0], getLhs().getType()));
  og.push_back(unbroadcast(b, getLoc(), neg(b, getLoc(), rg[0]),
                           getRhs().getType()));
  return success();
}

GRADIENT(MulOp) {
  Location l = getLoc();
  og.push_back(unbroadcast(b, l, mul(b, l, rg[0], getRhs()), getLhs().getType()));
  og.push_back(unbroadcast(b, l, mul(b, l, rg[0], getLhs()), getRhs().getType()));
  return success();
}

GRADIENT(DivOp) {
  Location l = getLoc();
  Value g = rg[0];
  og.push_back(unbroadcast(b, l, div(b, l, g, getRhs()), getLhs().getType()));
  // d(x/y)/dy = -x / y^2 = -(x/y) / y
  Value q = div(b, l, getResult(), getRhs());
  og.push_back(unbroadcast(b, l, neg(b, l, mul(b, l, g, q)), getRhs().getType()));
  return success();
}

GRADIENT(PowOp) {
  Location l = getLoc();
  Value g = rg[0], x = getLhs(), p = getRhs(), y = getResult();
  // d/dx = p * x^(p-1); d/dp = y * log(x)
  Value pm1 = sub(b, l, p, scalar(b, l, 1, p));
  Value dx = mul(b, l, p, PowOp::create(b, l, x, pm1));
  og.push_back(unbroadcast(b, l, mul(b, l, g, dx), x.getType()));
  Value dp = mul(b, l, y, LogOp::create(b, l, x));
  og.push_back(unbroadcast(b, l, mul(b, l, g, dp), p.getType()));
  return success();
}

/// maximum/minimum: the winner takes the gradient, ties share it.
static void extremumGradients(OpBuilder &b, Location l, Value g, Value x,
                              Value y, StringRef wins,
                              SmallVectorImpl<Value> &og) {
  Value half = scalar(b, l, 0.5, g);
  Value tie = asFloat(b, l, cmp(b, l, x, y, "eq"), g);
  Value xWins = asFloat(b, l, cmp(b, l, x, y, wins), g);
  Value xShare = add(b, l, xWins, mul(b, l, tie, half));
  Value one = scalar(b, l, 1, g);
  og.push_back(unbroadcast(b, l, mul(b, l, g, xShare), x.getType()));
  og.push_back(unbroadcast(b, l, mul(b, l, g, sub(b, l, one, xShare)),
                           y.getType()));
}

GRADIENT(MaximumOp) {
  extremumGradients(b, getLoc(), rg[0], getLhs(), getRhs(), "gt", og);
  return success();
}

GRADIENT(MinimumOp) {
  extremumGradients(b, getLoc(), rg[0], getLhs(), getRhs(), "lt", og);
  return success();
}

GRADIENT(NegOp) {
  og.push_back(neg(b, getLoc(), rg[0]));
  return success();
}

GRADIENT(AbsOp) {
  Location l = getLoc();
  Value x = getInput();
  Value zero = scalar(b, l, 0, x);
  Value pos = asFloat(b, l, cmp(b, l, x, zero, "gt"), x);
  Value negative = asFloat(b, l, cmp(b, l, x, zero, "lt"), x);
  og.push_back(mul(b, l, rg[0], sub(b, l, pos, negative)));
  return success();
}

GRADIENT(ReluOp) {
  // From the result (y > 0 exactly where x > 0): it is kept anyway when a
  // convolution or matmul reads it, and the input then need not be (a
  // batch-norm's output, which a library call writes).
  Location l = getLoc();
  Value y = getResult();
  og.push_back(mul(b, l, rg[0],
                   asFloat(b, l, cmp(b, l, y, scalar(b, l, 0, y), "gt"), y)));
  return success();
}

GRADIENT(ExpOp) {
  og.push_back(mul(b, getLoc(), rg[0], getResult()));
  return success();
}

GRADIENT(LogOp) {
  og.push_back(div(b, getLoc(), rg[0], getInput()));
  return success();
}

GRADIENT(SqrtOp) {
  Location l = getLoc();
  og.push_back(div(b, l, rg[0], mul(b, l, scalar(b, l, 2, getResult()),
                                      getResult())));
  return success();
}

GRADIENT(RsqrtOp) {
  Location l = getLoc();
  Value y = getResult();
  Value y3 = mul(b, l, y, mul(b, l, y, y));
  og.push_back(mul(b, l, rg[0], mul(b, l, scalar(b, l, -0.5, y), y3)));
  return success();
}

GRADIENT(TanhOp) {
  Location l = getLoc();
  Value y = getResult();
  og.push_back(mul(b, l, rg[0], sub(b, l, scalar(b, l, 1, y), mul(b, l, y, y))));
  return success();
}

GRADIENT(SigmoidOp) {
  Location l = getLoc();
  Value y = getResult();
  og.push_back(
      mul(b, l, rg[0], mul(b, l, y, sub(b, l, scalar(b, l, 1, y), y))));
  return success();
}

GRADIENT(SiluOp) {
  Location l = getLoc();
  Value x = getInput();
  Value s = SigmoidOp::create(b, l, x);
  // s + x s (1 - s)
  Value d = add(b, l, s, mul(b, l, x, mul(b, l, s, sub(b, l, scalar(b, l, 1, s), s))));
  og.push_back(mul(b, l, rg[0], d));
  return success();
}

GRADIENT(GeluOp) {
  Location l = getLoc();
  Value x = getInput();
  auto c = [&](double v) { return scalar(b, l, v, x); };
  Value d;
  if (getApproximate() == "tanh") {
    // u = k (x + a x^3); d = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) k (1 + 3 a x^2)
    double k = std::sqrt(2.0 / M_PI), a = 0.044715;
    Value x2 = mul(b, l, x, x);
    Value u = mul(b, l, c(k), add(b, l, x, mul(b, l, c(a), mul(b, l, x2, x))));
    Value t = TanhOp::create(b, l, u);
    Value left = mul(b, l, c(0.5), add(b, l, c(1), t));
    Value du = mul(b, l, c(k), add(b, l, c(1), mul(b, l, c(3 * a), x2)));
    Value right = mul(b, l, mul(b, l, c(0.5), x),
                      mul(b, l, sub(b, l, c(1), mul(b, l, t, t)), du));
    d = add(b, l, left, right);
  } else {
    // Phi(x) + x phi(x), Phi(x) = (gelu(x) / x) computed as 0.5 (1 + erf):
    // write Phi through exp-free pieces the graph has: Phi = gelu(x)/x is
    // singular at 0, so use phi and the identity gelu = x Phi.
    Value phi = mul(b, l, c(1.0 / std::sqrt(2 * M_PI)),
                    ExpOp::create(b, l, mul(b, l, c(-0.5), mul(b, l, x, x))));
    // Phi(x) = gelu(x) / x away from 0, and 0.5 at 0.
    Value gelu = getResult();
    Value zero = cmp(b, l, x, c(0), "eq");
    Value safeX = WhereOp::create(b, l, zero, c(1), x);
    Value cdf = WhereOp::create(b, l, zero, c(0.5), div(b, l, gelu, safeX));
    d = add(b, l, cdf, mul(b, l, x, phi));
  }
  og.push_back(mul(b, l, rg[0], d));
  return success();
}

GRADIENT(WhereOp) {
  Location l = getLoc();
  Value g = rg[0];
  Value zero = scalar(b, l, 0, g);
  og.push_back(Value());
  og.push_back(unbroadcast(b, l, WhereOp::create(b, l, getCond(), g, zero),
                           getLhs().getType()));
  og.push_back(unbroadcast(b, l, WhereOp::create(b, l, getCond(), zero, g),
                           getRhs().getType()));
  return success();
}

GRADIENT(CastOp) {
  Type in = getInput().getType();
  if (!isa<FloatType>(cast<RankedTensorType>(in).getElementType())) {
    og.push_back(Value());
    return success();
  }
  og.push_back(CastOp::create(b, getLoc(), in, rg[0]));
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and shapes
//===----------------------------------------------------------------------===//

GRADIENT(MatmulOp) {
  Location l = getLoc();
  Value g = rg[0], a = getLhs(), w = getRhs();
  og.push_back(unbroadcast(b, l, MatmulOp::create(b, l, g, swapLast(b, l, w)),
                           a.getType()));
  // A weight shared by every row of a batch (x[B, T, C] @ w[C, V]): its
  // gradient sums over the batch, which is one matmul with the batch in
  // its contraction, a^T[C, B*T] @ g[B*T, V], not B products of [C, V]
  // summed afterwards (GPT's vocabulary projection: B copies of the
  // weight's size).
  RankedTensorType at = typeOf(a), wt = typeOf(w);
  if (wt.getRank() == 2 && at.getRank() > 2 && at.hasStaticShape() &&
      typeOf(g).hasStaticShape()) {
    Value rowsT = swapLast(b, l, foldIntoRows(b, l, a));
    Value gradRows = foldIntoRows(b, l, g);
    og.push_back(MatmulOp::create(b, l, rowsT, gradRows));
    return success();
  }
  og.push_back(unbroadcast(b, l, MatmulOp::create(b, l, swapLast(b, l, a), g),
                           w.getType()));
  return success();
}

GRADIENT(ReshapeOp) {
  og.push_back(ReshapeOp::create(b, getLoc(), getInput().getType(), rg[0]));
  return success();
}

GRADIENT(TransposeOp) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = i;
  og.push_back(TransposeOp::create(b, getLoc(), rg[0],
                                   b.getDenseI64ArrayAttr(inverse)));
  return success();
}

GRADIENT(ConcatOp) {
  int64_t axis = getAxis(), start = 0;
  for (Value in : getInputs()) {
    int64_t size = typeOf(in).getDimSize(axis);
    og.push_back(SliceOp::create(b, getLoc(), rg[0], axis, start, start + size));
    start += size;
  }
  return success();
}

GRADIENT(SliceOp) {
  // Zeros around the slice's gradient, by concatenation.
  Location l = getLoc();
  RankedTensorType in = typeOf(getInput());
  int64_t axis = getAxis(), start = getStart(), end = getEnd();
  SmallVector<Value> parts;
  auto zeros = [&](int64_t n) {
    SmallVector<int64_t> shape(in.getShape());
    shape[axis] = n;
    auto t = RankedTensorType::get(shape, in.getElementType());
    return Value(ConstantOp::create(
        b, l, DenseElementsAttr::get(t, b.getFloatAttr(in.getElementType(), 0))));
  };
  if (start > 0)
    parts.push_back(zeros(start));
  parts.push_back(rg[0]);
  if (end < in.getDimSize(axis))
    parts.push_back(zeros(in.getDimSize(axis) - end));
  og.push_back(parts.size() == 1 ? parts[0]
                                 : Value(ConcatOp::create(b, l, parts, axis)));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and softmax
//===----------------------------------------------------------------------===//

GRADIENT(ReduceSumOp) {
  Location l = getLoc();
  Value g = keepReducedAxes(b, l, rg[0], getInput(), getAxes(), getKeepdim());
  og.push_back(broadcastTo(b, l, g, typeOf(getInput())));
  return success();
}

GRADIENT(ReduceMeanOp) {
  Location l = getLoc();
  Value g = keepReducedAxes(b, l, rg[0], getInput(), getAxes(), getKeepdim());
  g = mul(b, l, g, scalar(b, l, 1.0 / double(countOf(getInput(), getAxes())), g));
  og.push_back(broadcastTo(b, l, g, typeOf(getInput())));
  return success();
}

/// max/min reductions: the gradient goes to the elements equal to the
/// result, shared equally among ties.
static void extremeReductionGradient(OpBuilder &b, Location l, Value g,
                                     Value input, Value result,
                                     ArrayRef<int64_t> axes, bool keepdim,
                                     SmallVectorImpl<Value> &og) {
  Value kg = keepReducedAxes(b, l, g, input, axes, keepdim);
  Value kr = keepReducedAxes(b, l, result, input, axes, keepdim);
  Value hit = asFloat(b, l, cmp(b, l, input, kr, "eq"), input);
  Value count = ReduceSumOp::create(b, l, hit, b.getDenseI64ArrayAttr(axes),
                                    b.getBoolAttr(true));
  og.push_back(mul(b, l, hit, div(b, l, kg, count)));
}

GRADIENT(ReduceMaxOp) {
  extremeReductionGradient(b, getLoc(), rg[0], getInput(), getResult(),
                           getAxes(), getKeepdim(), og);
  return success();
}

GRADIENT(ReduceMinOp) {
  extremeReductionGradient(b, getLoc(), rg[0], getInput(), getResult(),
                           getAxes(), getKeepdim(), og);
  return success();
}

GRADIENT(SoftmaxOp) {
  Location l = getLoc();
  Value y = getResult(), g = rg[0];
  SmallVector<int64_t> axis = {int64_t(getAxis())};
  Value dot = ReduceSumOp::create(b, l, mul(b, l, g, y),
                                  b.getDenseI64ArrayAttr(axis), b.getBoolAttr(true));
  og.push_back(mul(b, l, y, sub(b, l, g, dot)));
  return success();
}

GRADIENT(LogSoftmaxOp) {
  Location l = getLoc();
  Value g = rg[0];
  SmallVector<int64_t> axis = {int64_t(getAxis())};
  Value sum = ReduceSumOp::create(b, l, g, b.getDenseI64ArrayAttr(axis),
                                  b.getBoolAttr(true));
  og.push_back(sub(b, l, g, mul(b, l, ExpOp::create(b, l, getResult()), sum)));
  return success();
}

GRADIENT(GlobalAvgPool2dOp) {
  Location l = getLoc();
  RankedTensorType in = typeOf(getInput());
  int64_t hw = in.getDimSize(2) * in.getDimSize(3);
  Value g = ReshapeOp::create(
      b, l,
      RankedTensorType::get({in.getDimSize(0), in.getDimSize(1), 1, 1},
                            in.getElementType()),
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
  if (getGroups() != 1)
    return emitError("the gradient of a grouped convolution is not built yet");
  Location l = getLoc();
  Value g = rg[0];
  og.push_back(Conv2dGradInputOp::create(b, l, getInput().getType(), g,
                                         getWeight(), getStrideAttr(),
                                         getPaddingAttr(), getDilationAttr()));
  og.push_back(Conv2dGradWeightOp::create(b, l, getWeight().getType(),
                                          getInput(), g, getStrideAttr(),
                                          getPaddingAttr(), getDilationAttr()));
  return success();
}

GRADIENT(MaxPool2dOp) {
  og.push_back(Pool2dGradOp::create(b, getLoc(), getInput().getType(),
                                    getInput(), rg[0], getKernelAttr(),
                                    getStrideAttr(), getPaddingAttr(),
                                    b.getBoolAttr(true)));
  return success();
}

GRADIENT(AvgPool2dOp) {
  og.push_back(Pool2dGradOp::create(b, getLoc(), getInput().getType(),
                                    getInput(), rg[0], getKernelAttr(),
                                    getStrideAttr(), getPaddingAttr(),
                                    b.getBoolAttr(false)));
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
