//===- Convolution.cpp - Convolution, its gradients, and pooling ----------===//
//
// conv2d as the linalg named convolutions (grouped or not); its gradients
// as contractions written out in linalg.generic; pooling (Pooling.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "compiler/Conversion/GraphToLinalg/Pooling.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::lowering {
namespace {

Results lowerConv(TensorBuilder &tb, Conv2dOp op, Conv2dOp::Adaptor a) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  ArrayRef<int64_t> stride = op.getStride(), pad = op.getPadding(),
                    dil = op.getDilation();
  int64_t padding[2] = {pad[0], pad[1]};
  Value x = tb.padSpatial(a.getInput(), padding, 0.0);
  Value w = a.getWeight();
  RankedTensorType out = op.getType();
  // The linalg named ops take these as dense tensors, not arrays.
  auto strides = b.getI64TensorAttr(stride);
  auto dilations = b.getI64TensorAttr(dil);
  int64_t g = op.getGroups();
  Type et = out.getElementType();
  if (g == 1) {
    Value init = tb.filled(out.getShape(), et, 0.0);
    return one(linalg::Conv2DNchwFchwOp::create(b, loc, TypeRange{out},
                                                ValueRange{x, w},
                                                ValueRange{init}, strides,
                                                dilations)
                   .getResult(0));
  }
  // Groups: split the channel axes and use the grouped named op.
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), os = out.getShape();
  Value xg = tb.reshape(x, {xs[0], g, xs[1] / g, xs[2], xs[3]});
  Value wg = tb.reshape(w, {g, ws[0] / g, ws[1], ws[2], ws[3]});
  SmallVector<int64_t> og = {os[0], g, os[1] / g, os[2], os[3]};
  Value init = tb.filled(og, et, 0.0);
  Value y = linalg::Conv2DNgchwGfchwOp::create(
                b, loc, TypeRange{init.getType()}, ValueRange{xg, wg},
                ValueRange{init}, strides, dilations)
                .getResult(0);
  return one(tb.reshape(y, os));
}

/// dW[o, c, kh, kw] = sum over n, oh, ow of
///   g[n, o, oh, ow] * xpad[n, c, oh*s + kh*d, ow*s + kw*d].
Results lowerConvGradWeight(TensorBuilder &tb, Conv2dGradWeightOp op,
                            Conv2dGradWeightOp::Adaptor ad) {
  OpBuilder &b = tb.builder();
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> s = op.getStride(), p = op.getPadding(), d = op.getDilation();
  int64_t pad[2] = {p[0], p[1]};
  Value x = tb.padSpatial(ad.getInput(), pad, 0.0);
  RankedTensorType out = op.getType();
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // (o, c, kh, kw, n, oh, ow)
  SmallVector<AffineMap> maps = {
      AffineMap::get(7, 0, {dim(4), dim(0), dim(5), dim(6)}, ctx),
      AffineMap::get(7, 0,
                     {dim(4), dim(1), dim(5) * s[0] + dim(2) * d[0],
                      dim(6) * s[1] + dim(3) * d[1]},
                     ctx),
      AffineMap::get(7, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  Value init = tb.filled(out.getShape(), out.getElementType(), 0.0);
  auto generic = linalg::GenericOp::create(
      b, tb.location(), TypeRange{out}, ValueRange{ad.getGrad(), x},
      ValueRange{init}, maps, iterators,
      [](OpBuilder &nb, Location l, ValueRange a) {
        linalg::YieldOp::create(
            nb, l, scalar::add(nb, l, a[2], scalar::mul(nb, l, a[0], a[1])));
      });
  return one(generic.getResult(0));
}

/// The transposed convolution: g dilated by the stride, padded so that
///   dXpad[n, c, i, j] = sum over o, kh, kw of
///     gpad[n, o, i + kh*d, j + kw*d] * flip(w)[o, c, kh, kw],
/// then the padding of the forward pass cut off.
Results lowerConvGradInput(TensorBuilder &tb, Conv2dGradInputOp op,
                           Conv2dGradInputOp::Adaptor ad) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> s = op.getStride(), p = op.getPadding(), d = op.getDilation();
  Value g = ad.getGrad(), w = ad.getWeight();
  RankedTensorType gt = typeOf(g), out = op.getType();
  ArrayRef<int64_t> gs = gt.getShape(), ws = typeOf(w).getShape();
  int64_t n = gs[0], c = ws[1], kh = ws[2], kw = ws[3];
  int64_t k[2] = {kh, kw};
  int64_t hp = out.getDimSize(2) + 2 * p[0], wp = out.getDimSize(3) + 2 * p[1];
  // Dilate by the stride: g lands every s-th position of a zero tensor.
  int64_t stride[2] = {s[0], s[1]};
  Value gdil = tb.dilateSpatial(g, stride);
  int64_t dil[2] = {shapeOf(gdil)[2], shapeOf(gdil)[3]};
  int64_t low[2], high[2];
  for (int i = 0; i < 2; ++i) {
    low[i] = (k[i] - 1) * d[i];
    high[i] = (i == 0 ? hp : wp) + (k[i] - 1) * d[i] - low[i] - dil[i];
  }
  Value gpad = tb.padSpatial(gdil, low, high, 0.0);
  auto dim = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  // The kernel flipped in space, materialized: linalg needs every loop to
  // appear as a plain dimension of some operand.
  RankedTensorType wt = typeOf(w);
  AffineMap flipMap = AffineMap::get(
      4, 0,
      {dim(0), dim(1), getAffineConstantExpr(kh - 1, ctx) - dim(2),
       getAffineConstantExpr(kw - 1, ctx) - dim(3)},
      ctx);
  Value flipped =
      linalg::GenericOp::create(
          b, loc, TypeRange{wt}, ValueRange{w},
          ValueRange{tb.empty(wt.getShape(), wt.getElementType())},
          {flipMap, AffineMap::getMultiDimIdentityMap(4, ctx)},
          SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
          [](OpBuilder &nb, Location l, ValueRange a) {
            linalg::YieldOp::create(nb, l, a[0]);
          })
          .getResult(0);
  // (n, c, i, j, o, kh, kw)
  SmallVector<AffineMap> maps = {
      AffineMap::get(7, 0,
                     {dim(0), dim(4), dim(2) + dim(5) * d[0], dim(3) + dim(6) * d[1]},
                     ctx),
      AffineMap::get(7, 0, {dim(4), dim(1), dim(5), dim(6)}, ctx),
      AffineMap::get(7, 0, {dim(0), dim(1), dim(2), dim(3)}, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  Value init = tb.filled({n, c, hp, wp}, out.getElementType(), 0.0);
  Value full = linalg::GenericOp::create(
                   b, loc, TypeRange{init.getType()}, ValueRange{gpad, flipped},
                   ValueRange{init}, maps, iterators,
                   [](OpBuilder &nb, Location l, ValueRange a) {
                     linalg::YieldOp::create(
                         nb, l,
                         scalar::add(nb, l, a[2], scalar::mul(nb, l, a[0], a[1])));
                   })
                   .getResult(0);
  int64_t pad[2] = {p[0], p[1]};
  return one(tb.cropSpatial(full, pad, out));
}

template <typename PoolOp> PoolWindow windowOf(PoolOp op, bool isMax) {
  PoolWindow w;
  for (int i = 0; i < 2; ++i) {
    w.kernel[i] = op.getKernel()[i];
    w.stride[i] = op.getStride()[i];
    w.padding[i] = op.getPadding()[i];
  }
  w.max = isMax;
  return w;
}

template <typename PoolOp, bool isMax>
Results lowerPool(TensorBuilder &tb, PoolOp op, typename PoolOp::Adaptor a) {
  return one(pool2d(tb, a.getInput(), op.getType(), windowOf(op, isMax)));
}

Results lowerPoolGrad(TensorBuilder &tb, Pool2dGradOp op, Pool2dGradOp::Adaptor a) {
  return one(pool2dGrad(tb, a.getInput(), a.getGrad(), windowOf(op, op.getMax())));
}

Results lowerGlobalAvgPool(TensorBuilder &tb, GlobalAvgPool2dOp,
                           GlobalAvgPool2dOp::Adaptor a) {
  return one(tb.mean(a.getInput(), {2, 3}, false));
}

} // namespace

void populateConvolutionPatterns(RewritePatternSet &patterns) {
  addLowering<Conv2dOp>(patterns, lowerConv);
  addLowering<Conv2dGradInputOp>(patterns, lowerConvGradInput);
  addLowering<Conv2dGradWeightOp>(patterns, lowerConvGradWeight);
  addLowering<MaxPool2dOp>(patterns, lowerPool<MaxPool2dOp, true>);
  addLowering<AvgPool2dOp>(patterns, lowerPool<AvgPool2dOp, false>);
  addLowering<Pool2dGradOp>(patterns, lowerPoolGrad);
  addLowering<GlobalAvgPool2dOp>(patterns, lowerGlobalAvgPool);
}

} // namespace sinter::lowering
