//===- GraphGradients.cpp - Elementwise vector-Jacobian products ----------===//
//
// GradientOpInterface for every differentiable op: the gradient of the loss
// with respect to each operand, built from graph ops at the op's location.
// Broadcasting is undone by summing over the broadcast axes. Conventions are
// PyTorch's where they differ from calculus at kinks: relu'(0) = 0,
// |x|'(0) = 0, ties of maximum/minimum share the gradient equally, ties of a
// max/min reduction too (amax).
//
// This file holds the helpers that the gradient rules share (declared in
// GraphGradientsInternal.h) and the rules of the elementwise ops;
// GraphGradientsLinalg.cpp and GraphGradientsNN.cpp hold the others.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphGradientsInternal.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;

namespace sinter::graph {

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

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

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

#undef GRADIENT

} // namespace sinter::graph
