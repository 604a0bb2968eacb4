//===- TensorMath.cpp - Matmuls and arithmetic for graph ops --------------===//
//
// The TensorBuilder members that compute: matmuls (named linalg ops where
// the CPU target's matmul library takes them), elementwise arithmetic with
// broadcasting, and the stable log-sum-exp and softmax.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/TensorBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <algorithm>

using namespace mlir;

namespace sinter::lowering {

//===----------------------------------------------------------------------===//
// Matmuls
//===----------------------------------------------------------------------===//

/// Collapses all leading dimensions of `v` into one: [d0, ..., m, k] ->
/// [d0*...*m, k] (`keep` = 1) or [d0*..., m, k] (`keep` = 2).
static Value collapseLeading(TensorBuilder &tb, Value v, int64_t keep) {
  ArrayRef<int64_t> s = TensorBuilder::typeOf(v).getShape();
  int64_t lead = 1;
  for (size_t i = 0; i + keep < s.size(); ++i)
    lead *= s[i];
  SmallVector<int64_t> shape = {lead};
  shape.append(s.end() - keep, s.end());
  return tb.reshape(v, shape);
}

Value TensorBuilder::matmul(Value a, Value bMat, ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> as = typeOf(a).getShape(), bs = typeOf(bMat).getShape();
  Type et = typeOf(a).getElementType();
  int64_t m = as[as.size() - 2], n = bs.back(), k = as.back();
  // The two common forms become named ops, which the CPU target hands to
  // its matmul library: a weight shared by every row (x @ W), and equal
  // batches (attention).
  if (bs.size() == 2) {
    Value a2 = collapseLeading(*this, a, 1);
    int64_t rows = typeOf(a2).getDimSize(0);
    Value init = filled({rows, n}, et, 0.0);
    Value c = linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                       ValueRange{a2, bMat}, ValueRange{init})
                  .getResult(0);
    return reshape(c, shape);
  }
  if (as.size() == bs.size() && as.drop_back(2) == bs.drop_back(2)) {
    Value a3 = collapseLeading(*this, a, 2);
    Value b3 = collapseLeading(*this, bMat, 2);
    int64_t batch = typeOf(a3).getDimSize(0);
    Value init = filled({batch, m, n}, et, 0.0);
    Value c = linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                            ValueRange{a3, b3}, ValueRange{init})
                  .getResult(0);
    return reshape(c, shape);
  }
  (void)k;
  return broadcastMatmul(a, bMat, shape);
}

Value TensorBuilder::matmulTransposedB(Value a, Value w,
                                       ArrayRef<int64_t> shape) {
  MLIRContext *ctx = b.getContext();
  Value a2 = collapseLeading(*this, a, 1);
  int64_t rows = typeOf(a2).getDimSize(0), n = typeOf(w).getDimSize(0);
  Value init = filled({rows, n}, typeOf(a).getElementType(), 0.0);
  AffineExpr m = getAffineDimExpr(0, ctx), nn = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {m, k}, ctx),
                                 AffineMap::get(3, 0, {nn, k}, ctx),
                                 AffineMap::get(3, 0, {m, nn}, ctx)};
  auto matmul = linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                         ValueRange{a2, w}, ValueRange{init});
  matmul.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  return reshape(matmul.getResult(0), shape);
}

Value TensorBuilder::broadcastMatmul(Value a, Value bMat,
                                     ArrayRef<int64_t> shape) {
  // Iteration space: (batch..., m, n, k); operands broadcast over the batch.
  MLIRContext *ctx = b.getContext();
  int64_t outRank = shape.size();
  int64_t rank = outRank + 1;
  int64_t batch = outRank - 2;
  auto operandMap = [&](Value v, bool isLhs) {
    ArrayRef<int64_t> s = typeOf(v).getShape();
    int64_t vBatch = s.size() - 2;
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < vBatch; ++i) {
      int64_t d = batch - vBatch + i;
      bool broadcast = s[i] == 1 && shape[d] != 1;
      exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx)
                                : getAffineDimExpr(d, ctx));
    }
    AffineExpr m = getAffineDimExpr(batch, ctx), n = getAffineDimExpr(batch + 1, ctx),
               k = getAffineDimExpr(batch + 2, ctx);
    exprs.push_back(isLhs ? m : k);
    exprs.push_back(isLhs ? k : n);
    return AffineMap::get(rank, 0, exprs, ctx);
  };
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < outRank; ++i)
    outExprs.push_back(getAffineDimExpr(i, ctx));
  SmallVector<AffineMap> maps = {operandMap(a, true), operandMap(bMat, false),
                                 AffineMap::get(rank, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(outRank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Type et = typeOf(a).getElementType();
  Value init = filled(shape, et, 0.0);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{a, bMat}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value p = scalar::mul(nb, nloc, args[0], args[1]);
        linalg::YieldOp::create(nb, nloc, scalar::add(nb, nloc, args[2], p));
      });
  return generic.getResult(0);
}

//===----------------------------------------------------------------------===//
// Compositions
//===----------------------------------------------------------------------===//

static SmallVector<int64_t> broadcastShape(ArrayRef<int64_t> x,
                                           ArrayRef<int64_t> y) {
  size_t rank = std::max(x.size(), y.size());
  SmallVector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t a = i < x.size() ? x[x.size() - 1 - i] : 1;
    int64_t c = i < y.size() ? y[y.size() - 1 - i] : 1;
    out[rank - 1 - i] = a == 1 ? c : a;
  }
  return out;
}

Value TensorBuilder::binaryFloat(Value x, Value y, int which) {
  SmallVector<int64_t> shape =
      broadcastShape(typeOf(x).getShape(), typeOf(y).getShape());
  return elementwise(shape, typeOf(x).getElementType(), {x, y},
                     [which](OpBuilder &nb, Location nloc, ValueRange a) {
                       switch (which) {
                       case 0: return scalar::add(nb, nloc, a[0], a[1]);
                       case 1: return scalar::sub(nb, nloc, a[0], a[1]);
                       case 2: return scalar::mul(nb, nloc, a[0], a[1]);
                       default:
                         return Value(arith::DivFOp::create(nb, nloc, a[0], a[1]));
                       }
                     });
}

Value TensorBuilder::add(Value x, Value y) { return binaryFloat(x, y, 0); }
Value TensorBuilder::sub(Value x, Value y) { return binaryFloat(x, y, 1); }
Value TensorBuilder::mul(Value x, Value y) { return binaryFloat(x, y, 2); }
Value TensorBuilder::div(Value x, Value y) { return binaryFloat(x, y, 3); }

Value TensorBuilder::exp(Value x) {
  RankedTensorType t = typeOf(x);
  return elementwise(t.getShape(), t.getElementType(), {x},
                     [](OpBuilder &nb, Location nloc, ValueRange a) {
                       return Value(math::ExpOp::create(nb, nloc, a[0]));
                     });
}

Value TensorBuilder::log(Value x) {
  RankedTensorType t = typeOf(x);
  return elementwise(t.getShape(), t.getElementType(), {x},
                     [](OpBuilder &nb, Location nloc, ValueRange a) {
                       return Value(math::LogOp::create(nb, nloc, a[0]));
                     });
}

Value TensorBuilder::scale(Value x, double factor) {
  RankedTensorType t = typeOf(x);
  return elementwise(t.getShape(), t.getElementType(), {x},
                     [factor](OpBuilder &nb, Location nloc, ValueRange a) {
                       Value f = scalarAt(nb, nloc, factor, a[0].getType());
                       return scalar::mul(nb, nloc, a[0], f);
                     });
}

Value TensorBuilder::sumExpShifted(Value x, Value m, int64_t axis) {
  RankedTensorType type = typeOf(x);
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> rowExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i) {
    iterators.push_back(i == axis ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
    if (i != axis)
      rowExprs.push_back(getAffineDimExpr(i, ctx));
  }
  AffineMap rowMap = AffineMap::get(rank, 0, rowExprs, ctx);
  Type et = type.getElementType();
  // In f64, as reduce() sums.
  Type acc = et.getIntOrFloatBitWidth() < 64 ? b.getF64Type() : et;
  Value init = filled(typeOf(m).getShape(), acc, 0);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{x, m}, ValueRange{init},
      {AffineMap::getMultiDimIdentityMap(rank, ctx), rowMap, rowMap}, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value e = math::ExpOp::create(nb, nloc, scalar::sub(nb, nloc, args[0], args[1]));
        Value sum = scalar::add(nb, nloc, args[2], scalar::convert(nb, nloc, e, acc));
        linalg::YieldOp::create(nb, nloc, sum);
      });
  Value sum = generic.getResult(0);
  if (acc == et)
    return sum;
  return convert(sum, et);
}

/// `shape` with `axis` of size 1.
static SmallVector<int64_t> keptAxis(ArrayRef<int64_t> shape, int64_t axis) {
  SmallVector<int64_t> kept(shape);
  kept[axis] = 1;
  return kept;
}

Value TensorBuilder::logSumExpRows(Value x, int64_t axis) {
  Value m = reduce(x, {axis}, ReduceKind::Max, /*keepdim=*/false);
  return add(m, log(sumExpShifted(x, m, axis)));
}

Value TensorBuilder::logSumExp(Value x, int64_t axis) {
  return reshape(logSumExpRows(x, axis), keptAxis(typeOf(x).getShape(), axis));
}

Value TensorBuilder::softmax(Value x, int64_t axis) {
  // The same max and sum as logSumExp's, so that a loss and its gradient
  // share them; the exponentials are recomputed, never stored.
  Value m = reduce(x, {axis}, ReduceKind::Max, /*keepdim=*/false);
  Value s = sumExpShifted(x, m, axis);
  SmallVector<int64_t> kept = keptAxis(typeOf(x).getShape(), axis);
  RankedTensorType t = typeOf(x);
  return elementwise(t.getShape(), t.getElementType(),
                     {x, reshape(m, kept), reshape(s, kept)},
                     [](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
                       Value e = math::ExpOp::create(nb, nloc,
                                                     scalar::sub(nb, nloc, a[0], a[1]));
                       return arith::DivFOp::create(nb, nloc, e, a[2]);
                     });
}

Value TensorBuilder::logSoftmax(Value x, int64_t axis) {
  return sub(x, logSumExp(x, axis));
}

} // namespace sinter::lowering
