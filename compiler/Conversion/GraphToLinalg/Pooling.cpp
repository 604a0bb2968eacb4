//===- Pooling.cpp - 2-D pooling and its gradient in linalg --------------===//
//
// Where no library pools (CUDA, and f64 anywhere; the CPU's f32 poolings
// are oneDNN's, Convolution.cpp). The forward pass uses linalg's named
// pooling ops. The gradient is a
// transposed window op, like the convolution's: the result's gradient is
// dilated by the stride and padded by the kernel, and every input position
// sums over the kernel offsets whose window covers it. For max pooling, a
// first pass records which offset of each window won (the first maximum in
// row-major order, as PyTorch picks), and only that offset receives the
// window's gradient.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Pooling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <limits>

using namespace mlir;

namespace sinter::lowering {
namespace {

SmallVector<utils::IteratorType> iterators(int parallel, int reduction) {
  SmallVector<utils::IteratorType> it(parallel, utils::IteratorType::parallel);
  it.append(reduction, utils::IteratorType::reduction);
  return it;
}

Value asFloat(OpBuilder &b, Location l, Value index, Type type) {
  Value i = arith::IndexCastOp::create(b, l, b.getI64Type(), index);
  return arith::SIToFPOp::create(b, l, type, i);
}

/// For each window (n, c, oh, ow), 1 + the row-major offset kh*KW + kw of
/// its first maximum, as a float of the input's type (exact: windows are
/// small).
Value windowArgmax(TensorBuilder &tb, Value xpad, RankedTensorType pooled,
                   const PoolWindow &w) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  MLIRContext *ctx = b.getContext();
  Type et = pooled.getElementType();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // (n, c, oh, ow, kh, kw)
  SmallVector<AffineMap> maps = {
      AffineMap::get(6, 0,
                     {d(0), d(1), d(2) * w.stride[0] + d(4),
                      d(3) * w.stride[1] + d(5)},
                     ctx),
      AffineMap::get(6, 0, {d(4), d(5)}, ctx),
      AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx),
      AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx)};
  Value window = tb.empty({w.kernel[0], w.kernel[1]}, et);
  Value best = tb.filled(pooled.getShape(), et,
                         -std::numeric_limits<double>::infinity());
  Value where = tb.filled(pooled.getShape(), et, 0.0);
  int64_t kw = w.kernel[1];
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{pooled, pooled}, ValueRange{xpad, window},
      ValueRange{best, where}, maps, iterators(4, 2),
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value kh = linalg::IndexOp::create(nb, l, 4);
        Value kwi = linalg::IndexOp::create(nb, l, 5);
        Value width = arith::ConstantIndexOp::create(nb, l, kw);
        Value one = arith::ConstantIndexOp::create(nb, l, 1);
        Value offset = arith::AddIOp::create(
            nb, l, arith::AddIOp::create(
                       nb, l, arith::MulIOp::create(nb, l, kh, width), kwi),
            one);
        // Strictly greater: an equal later value does not displace the
        // first maximum.
        Value better = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                             a[0], a[2]);
        Value v = arith::SelectOp::create(nb, l, better, a[0], a[2]);
        Value i = arith::SelectOp::create(nb, l, better,
                                          asFloat(nb, l, offset, a[3].getType()),
                                          a[3]);
        linalg::YieldOp::create(nb, l, ValueRange{v, i});
      });
  return generic.getResult(1);
}

} // namespace

Value pool2d(TensorBuilder &tb, Value input, RankedTensorType out,
             const PoolWindow &w) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  double padValue = w.max ? -std::numeric_limits<double>::infinity() : 0.0;
  Value x = tb.padSpatial(input, w.padding, padValue);
  Type et = out.getElementType();
  Value window = tb.empty({w.kernel[0], w.kernel[1]}, et);
  Value init = tb.filled(out.getShape(), et, padValue);
  auto strides = b.getI64TensorAttr({w.stride[0], w.stride[1]});
  auto dilations = b.getI64TensorAttr({1, 1});
  if (w.max)
    return linalg::PoolingNchwMaxOp::create(b, loc, TypeRange{out},
                                            ValueRange{x, window},
                                            ValueRange{init}, strides,
                                            dilations)
        .getResult(0);
  // PyTorch's default count_include_pad=True: divide by the full window.
  Value sum = linalg::PoolingNchwSumOp::create(b, loc, TypeRange{out},
                                               ValueRange{x, window},
                                               ValueRange{init}, strides,
                                               dilations)
                  .getResult(0);
  return tb.scale(sum, 1.0 / double(w.kernel[0] * w.kernel[1]));
}

Value pool2dGrad(TensorBuilder &tb, Value input, Value grad,
                 const PoolWindow &w) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  MLIRContext *ctx = b.getContext();
  RankedTensorType in = TensorBuilder::typeOf(input);
  RankedTensorType pooled = TensorBuilder::typeOf(grad);
  Type et = in.getElementType();
  ArrayRef<int64_t> is = in.getShape();
  int64_t padded[2] = {is[2] + 2 * w.padding[0], is[3] + 2 * w.padding[1]};

  // Every window's gradient, and for max its winning offset, placed at the
  // window's top-left corner in the padded input's grid, then padded so
  // that position (i, j) with kernel offset (kh, kw) reads the window whose
  // offset (KH-1-kh, KW-1-kw) is (i, j).
  auto spread = [&](Value v) {
    Value dil = tb.dilateSpatial(v, w.stride);
    ArrayRef<int64_t> ds = TensorBuilder::typeOf(dil).getShape();
    int64_t low[2], high[2];
    for (int i = 0; i < 2; ++i) {
      low[i] = w.kernel[i] - 1;
      high[i] = padded[i] - ds[2 + i];
    }
    return tb.padSpatial(dil, low, high, 0.0);
  };
  Value gpad = spread(grad);
  SmallVector<Value> inputs = {gpad};
  if (w.max) {
    Value xpad = tb.padSpatial(input, w.padding,
                               -std::numeric_limits<double>::infinity());
    inputs.push_back(spread(windowArgmax(tb, xpad, pooled, w)));
  }
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // (n, c, i, j, kh, kw)
  AffineMap shifted = AffineMap::get(6, 0, {d(0), d(1), d(2) + d(4), d(3) + d(5)}, ctx);
  SmallVector<AffineMap> maps(inputs.size(), shifted);
  maps.push_back(AffineMap::get(6, 0, {d(4), d(5)}, ctx));
  maps.push_back(AffineMap::get(6, 0, {d(0), d(1), d(2), d(3)}, ctx));
  inputs.push_back(tb.empty({w.kernel[0], w.kernel[1]}, et));
  Value init = tb.filled({is[0], is[1], padded[0], padded[1]}, et, 0.0);
  int64_t kh = w.kernel[0], kw = w.kernel[1];
  bool isMax = w.max;
  double share = 1.0 / double(kh * kw);
  Value full =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
          iterators(4, 2),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value acc = a.back();
            Value g = a[0];
            if (isMax) {
              // The window offset this (i, j) is at: (KH-1-kh, KW-1-kw).
              Value r = linalg::IndexOp::create(nb, l, 4);
              Value c = linalg::IndexOp::create(nb, l, 5);
              auto idx = [&](int64_t v) {
                return arith::ConstantIndexOp::create(nb, l, v);
              };
              Value row = arith::SubIOp::create(nb, l, idx(kh - 1), r);
              Value col = arith::SubIOp::create(nb, l, idx(kw - 1), c);
              Value offset = arith::AddIOp::create(
                  nb, l,
                  arith::AddIOp::create(
                      nb, l, arith::MulIOp::create(nb, l, row, idx(kw)), col),
                  idx(1));
              Value won = arith::CmpFOp::create(
                  nb, l, arith::CmpFPredicate::OEQ, a[1],
                  asFloat(nb, l, offset, a[1].getType()));
              Value zero = TensorBuilder::scalarAt(nb, l, 0.0, g.getType());
              g = arith::SelectOp::create(nb, l, won, g, zero);
            } else {
              g = arith::MulFOp::create(
                  nb, l, g, TensorBuilder::scalarAt(nb, l, share, g.getType()));
            }
            linalg::YieldOp::create(nb, l, Value(arith::AddFOp::create(nb, l, acc, g)));
          })
          .getResult(0);
  return tb.cropSpatial(full, w.padding, in);
}

} // namespace sinter::lowering
