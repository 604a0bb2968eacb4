//===- TensorBuilder.cpp - Building linalg/tensor IR for graph ops --------===//
//
// Scalars and the structural tensor ops: fills, elementwise maps,
// reductions, reshapes, transposes, pads and crops. Matmuls and the
// arithmetic compositions are in TensorMath.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/TensorBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace sinter::lowering {

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

Value TensorBuilder::scalarAt(OpBuilder &b, Location loc, double value,
                              Type type) {
  if (auto ft = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value TensorBuilder::scalar(double value, Type type) {
  return scalarAt(b, loc, value, type);
}

namespace scalar {

static bool isFloat(Value x) { return isa<FloatType>(x.getType()); }

Value add(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}
Value sub(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x))
    return arith::SubFOp::create(b, loc, x, y);
  return arith::SubIOp::create(b, loc, x, y);
}
Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x))
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}
Value max(OpBuilder &b, Location loc, Value x, Value y) {
  // maximumf propagates NaN, like torch.maximum and torch.max.
  if (isFloat(x))
    return arith::MaximumFOp::create(b, loc, x, y);
  return arith::MaxSIOp::create(b, loc, x, y);
}
Value min(OpBuilder &b, Location loc, Value x, Value y) {
  if (isFloat(x))
    return arith::MinimumFOp::create(b, loc, x, y);
  return arith::MinSIOp::create(b, loc, x, y);
}
Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value one = TensorBuilder::scalarAt(b, loc, 1.0, x.getType());
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
}

Value convert(OpBuilder &b, Location loc, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto fromF = dyn_cast<FloatType>(from);
  auto toF = dyn_cast<FloatType>(to);
  if (fromF && toF) {
    if (fromF.getWidth() < toF.getWidth())
      return arith::ExtFOp::create(b, loc, to, x);
    return arith::TruncFOp::create(b, loc, to, x);
  }
  if (to.isInteger(1)) {
    // Like NumPy: nonzero is true.
    Value zero = TensorBuilder::scalarAt(b, loc, 0, from);
    if (fromF)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x, zero);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x, zero);
  }
  if (from.isInteger(1)) {
    if (toF)
      return arith::UIToFPOp::create(b, loc, to, x);
    return arith::ExtUIOp::create(b, loc, to, x);
  }
  if (fromF)
    return arith::FPToSIOp::create(b, loc, to, x);
  if (toF)
    return arith::SIToFPOp::create(b, loc, to, x);
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtSIOp::create(b, loc, to, x);
  return arith::TruncIOp::create(b, loc, to, x);
}

} // namespace scalar

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

Value TensorBuilder::empty(ArrayRef<int64_t> shape, Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value TensorBuilder::filled(ArrayRef<int64_t> shape, Type elementType,
                            double value) {
  Value init = empty(shape, elementType);
  return linalg::FillOp::create(b, loc, ValueRange{scalar(value, elementType)},
                                ValueRange{init})
      .getResult(0);
}

Value TensorBuilder::convert(Value x, Type to) {
  return elementwise(typeOf(x).getShape(), to, ValueRange{x},
                     [&](OpBuilder &nb, Location nloc, ValueRange a) {
                       return scalar::convert(nb, nloc, a[0], to);
                     });
}

Value TensorBuilder::elementwise(ArrayRef<int64_t> shape, Type elementType,
                                 ValueRange inputs, const ScalarFn &fn) {
  int64_t rank = shape.size();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps;
  for (Value in : inputs) {
    ArrayRef<int64_t> inShape = typeOf(in).getShape();
    int64_t offset = rank - inShape.size();
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < int64_t(inShape.size()); ++i) {
      bool broadcast = inShape[i] == 1 && shape[offset + i] != 1;
      exprs.push_back(broadcast ? getAffineConstantExpr(0, ctx)
                                : getAffineDimExpr(offset + i, ctx));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  Value init = empty(shape, elementType);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r = fn(nb, nloc, args.drop_back());
        linalg::YieldOp::create(nb, nloc, r);
      });
  return generic.getResult(0);
}

Value TensorBuilder::reduce(Value input, ArrayRef<int64_t> axes,
                            ReduceKind kind, bool keepdim) {
  RankedTensorType type = typeOf(input);
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes)
    reduced[a] = true;
  SmallVector<int64_t> kept, keptShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i) {
    iterators.push_back(reduced[i] ? utils::IteratorType::reduction
                                   : utils::IteratorType::parallel);
    if (reduced[i])
      continue;
    keptShape.push_back(type.getDimSize(i));
    outExprs.push_back(getAffineDimExpr(i, ctx));
  }
  Type et = type.getElementType();
  double identity = 0;
  if (kind == ReduceKind::Max)
    identity = isa<FloatType>(et) ? -std::numeric_limits<double>::infinity()
                                  : double(std::numeric_limits<int64_t>::min());
  if (kind == ReduceKind::Min)
    identity = isa<FloatType>(et) ? std::numeric_limits<double>::infinity()
                                  : double(std::numeric_limits<int64_t>::max());
  if (!isa<FloatType>(et) && kind != ReduceKind::Sum) {
    // The extreme of the integer type itself, not of int64.
    unsigned width = et.getIntOrFloatBitWidth();
    double extreme = std::ldexp(1.0, width - 1);
    identity = kind == ReduceKind::Max ? -extreme : extreme - 1;
  }
  // Float sums accumulate in f64: a float32 accumulator adding hundreds of
  // terms one at a time loses digits (batch-norm's per-channel sums over
  // N*H*W elements were 10x less precise than JAX's).
  Type acc = et;
  if (kind == ReduceKind::Sum && isa<FloatType>(et) && et.getIntOrFloatBitWidth() < 64)
    acc = b.getF64Type();
  Value init = filled(keptShape, acc, identity);
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, outExprs, ctx)};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ValueRange{input}, ValueRange{init},
      maps, iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value r;
        Value x = args[0];
        if (acc != et)
          x = scalar::convert(nb, nloc, x, acc);
        switch (kind) {
        case ReduceKind::Sum: r = scalar::add(nb, nloc, args[1], x); break;
        case ReduceKind::Max: r = scalar::max(nb, nloc, args[1], args[0]); break;
        case ReduceKind::Min: r = scalar::min(nb, nloc, args[1], args[0]); break;
        }
        linalg::YieldOp::create(nb, nloc, r);
      });
  Value result = generic.getResult(0);
  if (acc != et)
    result = convert(result, et);
  if (!keepdim)
    return result;
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i)
    shape.push_back(reduced[i] ? 1 : type.getDimSize(i));
  return reshape(result, shape);
}

Value TensorBuilder::mean(Value input, ArrayRef<int64_t> axes, bool keepdim) {
  RankedTensorType type = typeOf(input);
  int64_t count = 1;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (axes.empty() || llvm::is_contained(axes, i))
      count *= type.getDimSize(i);
  Value sum = reduce(input, axes, ReduceKind::Sum, keepdim);
  return scale(sum, 1.0 / double(count));
}

Value TensorBuilder::reshape(Value input, ArrayRef<int64_t> shape) {
  RankedTensorType type = typeOf(input);
  if (type.getShape() == shape)
    return input;
  auto target = RankedTensorType::get(shape, type.getElementType());
  if (shape.size() < size_t(type.getRank())) {
    if (auto re = getReassociationIndicesForCollapse(type.getShape(), shape))
      return tensor::CollapseShapeOp::create(b, loc, target, input, *re);
  } else if (shape.size() > size_t(type.getRank())) {
    if (auto re = getReassociationIndicesForCollapse(shape, type.getShape()))
      return tensor::ExpandShapeOp::create(b, loc, target, input, *re);
  }
  // Neither a pure collapse nor a pure expansion: go through one dimension.
  int64_t n = type.getNumElements();
  Value flat = input;
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> all(1);
    for (int64_t i = 0; i < type.getRank(); ++i)
      all[0].push_back(i);
    flat = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({n}, type.getElementType()), input, all);
  }
  if (shape.size() == 1)
    return flat;
  SmallVector<ReassociationIndices> all(1);
  for (size_t i = 0; i < shape.size(); ++i)
    all[0].push_back(i);
  return tensor::ExpandShapeOp::create(b, loc, target, flat, all);
}

Value TensorBuilder::transpose(Value input, ArrayRef<int64_t> perm) {
  RankedTensorType type = typeOf(input);
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(type.getDimSize(p));
  Value init = empty(shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, input, init, perm).getResult()[0];
}

Value TensorBuilder::transposeLast(Value input) {
  int64_t rank = typeOf(input).getRank();
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return transpose(input, perm);
}

Value TensorBuilder::padSpatial(Value input, const int64_t pad[2],
                                double value) {
  return padSpatial(input, pad, pad, value);
}

Value TensorBuilder::padSpatial(Value input, const int64_t low[2],
                                const int64_t high[2], double value) {
  if (!low[0] && !low[1] && !high[0] && !high[1])
    return input;
  RankedTensorType type = typeOf(input);
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> lowOfr(rank, b.getIndexAttr(0)),
      highOfr(rank, b.getIndexAttr(0));
  for (int i = 0; i < 2; ++i) {
    shape[rank - 2 + i] += low[i] + high[i];
    lowOfr[rank - 2 + i] = b.getIndexAttr(low[i]);
    highOfr[rank - 2 + i] = b.getIndexAttr(high[i]);
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value padValue = scalar(value, type.getElementType());
  return tensor::PadOp::create(b, loc, resultType, input, lowOfr, highOfr,
                               padValue);
}

Value TensorBuilder::dilateSpatial(Value input, const int64_t stride[2]) {
  if (stride[0] == 1 && stride[1] == 1)
    return input;
  RankedTensorType type = typeOf(input);
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  for (int i = 0; i < 2; ++i)
    shape[rank - 2 + i] = (shape[rank - 2 + i] - 1) * stride[i] + 1;
  Value zeros = filled(shape, type.getElementType(), 0.0);
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      strides(rank, b.getIndexAttr(1));
  for (int64_t v : type.getShape())
    sizes.push_back(b.getIndexAttr(v));
  strides[rank - 2] = b.getIndexAttr(stride[0]);
  strides[rank - 1] = b.getIndexAttr(stride[1]);
  return tensor::InsertSliceOp::create(b, loc, input, zeros, offsets, sizes,
                                       strides);
}

Value TensorBuilder::cropSpatial(Value input, const int64_t pad[2],
                                 RankedTensorType resultType) {
  if (pad[0] == 0 && pad[1] == 0 && typeOf(input) == resultType)
    return input;
  int64_t rank = resultType.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), sizes,
      unit(rank, b.getIndexAttr(1));
  offsets[rank - 2] = b.getIndexAttr(pad[0]);
  offsets[rank - 1] = b.getIndexAttr(pad[1]);
  for (int64_t v : resultType.getShape())
    sizes.push_back(b.getIndexAttr(v));
  return tensor::ExtractSliceOp::create(b, loc, resultType, input, offsets,
                                        sizes, unit);
}

} // namespace sinter::lowering
