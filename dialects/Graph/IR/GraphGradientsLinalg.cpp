//===- GraphGradientsLinalg.cpp - Gradients of matmul, shapes, reductions -===//
//
// GradientOpInterface for the linear algebra and shape ops (matmul,
// reshape, transpose, concat, slice), the reductions and softmax; the
// conventions and the shared helpers are those of GraphGradients.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphGradientsInternal.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

namespace sinter::graph {
namespace {

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

#undef GRADIENT

} // namespace sinter::graph
