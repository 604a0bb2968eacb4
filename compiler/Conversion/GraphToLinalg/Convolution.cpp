//===- Convolution.cpp - Convolution, its gradients, and pooling ----------===//
//
// An f32 conv2d and its gradients as the train dialect's library ops, which
// each target's library (oneDNN, cuDNN) runs whole; otherwise as the linalg
// named convolutions (grouped or not) on padded copies. Pooling likewise:
// the CPU's library ops in f32, else linalg (Pooling.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "compiler/Conversion/GraphToLinalg/Pooling.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Sinter/IR/SinterAttrs.h"
#include "dialects/Train/IR/TrainOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::lowering {
namespace {

/// A linalg named convolution onto zeros (the named ops take the strides
/// and dilations as dense tensors, not arrays).
template <typename NamedConvOp>
Value convOntoZeros(TensorBuilder &tb, Value x, Value w, ArrayRef<int64_t> outShape,
                    ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation) {
  OpBuilder &b = tb.builder();
  Value init = tb.filled(outShape, typeOf(x).getElementType(), 0.0);
  return NamedConvOp::create(b, tb.location(), TypeRange{init.getType()}, ValueRange{x, w},
                             ValueRange{init}, b.getI64TensorAttr(stride),
                             b.getI64TensorAttr(dilation))
      .getResult(0);
}

/// One group's convolution as the named op the targets hand to their
/// libraries (oneDNN, cuDNN): y[n, f, h, w] = sum over c, kh, kw of
/// x[n, c, h*s + kh*d, w*s + kw*d] * w[f, c, kh, kw].
Value namedConv(TensorBuilder &tb, Value x, Value w, ArrayRef<int64_t> outShape,
                ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation) {
  return convOntoZeros<linalg::Conv2DNchwFchwOp>(tb, x, w, outShape, stride, dilation);
}

/// Convolutions of `groups` groups as the grouped named op:
/// y[n, g, f, h, w] = sum over c, kh, kw of
/// x[n, g, c, h*s + kh*d, w*s + kw*d] * w[g, f, c, kh, kw], on x
/// [N, G, C, H, W] and w [G, F, C, KH, KW].
Value groupedConv(TensorBuilder &tb, Value x, Value w, ArrayRef<int64_t> outShape,
                  ArrayRef<int64_t> stride, ArrayRef<int64_t> dilation) {
  return convOntoZeros<linalg::Conv2DNgchwGfchwOp>(tb, x, w, outShape, stride, dilation);
}

/// Whether an f32 op goes to its device's library: oneDNN on the CPU, and
/// (unless `cpuOnly`: the CPU's poolings and grouped convolutions) cuDNN
/// on CUDA. A convolution and
/// both its gradients are primitives there that take the padding
/// themselves, and stay whole, as the train dialect's library ops, to the
/// library call. In f64 (no library kernel) they are the named
/// convolutions below, on padded copies, and poolings are linalg
/// (Pooling.h).
bool forLibrary(Operation *op, bool cpuOnly = false) {
  auto module = op->getParentOfType<ModuleOp>();
  StringAttr device = module ? attrs::device.get(module) : StringAttr();
  return device &&
         (device.getValue() == "cpu" || (!cpuOnly && device.getValue() == "cuda")) &&
         cast<RankedTensorType>(op->getResult(0).getType()).getElementType().isF32();
}

/// Channels-last convolutions and poolings are the library's alone
/// (graph-channels-last makes them only for it).
Results channelsLastWithoutLibrary(Operation *op) {
  op->emitError("internal error: a channels-last ")
      << op->getName() << " that no library runs";
  return failure();
}

Results lowerConv(TensorBuilder &tb, Conv2dOp op, Conv2dOp::Adaptor a) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  ArrayRef<int64_t> stride = op.getStride(), pad = op.getPadding(),
                    dil = op.getDilation();
  RankedTensorType out = op.getType();
  int64_t g = op.getGroups();
  if (forLibrary(op, /*cpuOnly=*/g != 1))
    return one(train::ConvForwardOp::create(b, loc, out, a.getInput(), a.getWeight(),
                                            Value(), op.getStrideAttr(),
                                            op.getPaddingAttr(), op.getDilationAttr(),
                                            op.getChannelsLastAttr(), op.getGroupsAttr())
                   .getResult());
  if (op.getChannelsLast())
    return channelsLastWithoutLibrary(op);
  int64_t padding[2] = {pad[0], pad[1]};
  Value x = tb.padSpatial(a.getInput(), padding, 0.0);
  Value w = a.getWeight();
  if (g == 1)
    return one(namedConv(tb, x, w, out.getShape(), stride, dil));
  // Groups: split the channel axes and use the grouped named op.
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w), os = out.getShape();
  Value xg = tb.reshape(x, {xs[0], g, xs[1] / g, xs[2], xs[3]});
  Value wg = tb.reshape(w, {g, ws[0] / g, ws[1], ws[2], ws[3]});
  Value y = groupedConv(tb, xg, wg, {os[0], g, os[1] / g, os[2], os[3]}, stride, dil);
  return one(tb.reshape(y, os));
}

/// dW[o, c, kh, kw] = sum over n, oh, ow of
///   g[n, o, oh, ow] * xpad[n, c, oh*s + kh*d, ow*s + kw*d],
/// which is itself a convolution: of xpad with batch and channels swapped,
/// by g with batch and channels swapped as the kernel, with stride d and
/// dilation s; its [c, o, kh, kw] result is transposed back. The padded
/// rows and columns past the forward pass's last window are cut first, so
/// that it yields exactly kh x kw.
Results lowerConvGradWeight(TensorBuilder &tb, Conv2dGradWeightOp op,
                            Conv2dGradWeightOp::Adaptor ad) {
  OpBuilder &b = tb.builder();
  ArrayRef<int64_t> s = op.getStride(), p = op.getPadding(), d = op.getDilation();
  int64_t groups = op.getGroups();
  if (forLibrary(op, /*cpuOnly=*/groups != 1))
    return one(train::ConvBackwardWeightsOp::create(
                   b, tb.location(), op.getType(), ad.getInput(), ad.getGrad(), Value(),
                   op.getStrideAttr(), op.getPaddingAttr(), op.getDilationAttr(),
                   op.getChannelsLastAttr(), op.getGroupsAttr())
                   .getResult());
  if (op.getChannelsLast())
    return channelsLastWithoutLibrary(op);
  int64_t pad[2] = {p[0], p[1]};
  Value x = tb.padSpatial(ad.getInput(), pad, 0.0);
  ArrayRef<int64_t> gs = shapeOf(ad.getGrad()), os = op.getType().getShape();
  SmallVector<int64_t> read(shapeOf(x));
  for (int i = 0; i < 2; ++i)
    read[2 + i] = s[i] * (gs[2 + i] - 1) + d[i] * (os[2 + i] - 1) + 1;
  if (ArrayRef<int64_t>(read) != shapeOf(x)) {
    auto idx = [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); };
    x = tensor::ExtractSliceOp::create(
        b, tb.location(), RankedTensorType::get(read, typeOf(x).getElementType()), x,
        SmallVector<OpFoldResult>(4, idx(0)),
        llvm::map_to_vector(read, [&](int64_t v) { return idx(v); }),
        SmallVector<OpFoldResult>(4, idx(1)));
  }
  if (groups != 1) {
    // Per group the same: x [N, G, C, H, W] read as [C, G, N, H, W] (batch
    // and channels swapped), g [N, G, F, OH, OW] as the kernel [G, F, N,
    // OH, OW]; the [C, G, F, KH, KW] result goes back to [G, F, C, KH, KW].
    int64_t n = read[0], c = read[1] / groups, f = os[0] / groups;
    Value xt = tb.transpose(tb.reshape(x, {n, groups, c, read[2], read[3]}), {2, 1, 0, 3, 4});
    Value gt = tb.transpose(tb.reshape(ad.getGrad(), {n, groups, f, gs[2], gs[3]}),
                            {1, 2, 0, 3, 4});
    Value dwt = groupedConv(tb, xt, gt, {c, groups, f, os[2], os[3]}, d, s);
    return one(tb.reshape(tb.transpose(dwt, {1, 2, 0, 3, 4}), os));
  }
  Value xt = tb.transpose(x, {1, 0, 2, 3});
  Value gt = tb.transpose(ad.getGrad(), {1, 0, 2, 3});
  Value dwt = namedConv(tb, xt, gt, {os[1], os[0], os[2], os[3]}, d, s);
  return one(tb.transpose(dwt, {1, 0, 2, 3}));
}

/// The transposed convolution: g dilated by the stride, padded so that
///   dXpad[n, c, i, j] = sum over o, kh, kw of
///     gpad[n, o, i + kh*d, j + kw*d] * w[o, c, k-1-kh, k-1-kw],
/// a convolution of gpad with dilation d by the kernel flipped in space
/// with its two channel axes swapped; then the padding of the forward pass
/// is cut off.
Results lowerConvGradInput(TensorBuilder &tb, Conv2dGradInputOp op,
                           Conv2dGradInputOp::Adaptor ad) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  MLIRContext *ctx = b.getContext();
  ArrayRef<int64_t> s = op.getStride(), p = op.getPadding(), d = op.getDilation();
  Value g = ad.getGrad(), w = ad.getWeight();
  RankedTensorType out = op.getType();
  int64_t groups = op.getGroups();
  if (forLibrary(op, /*cpuOnly=*/groups != 1))
    return one(train::ConvBackwardDataOp::create(b, loc, out, g, w, Value(),
                                                 op.getStrideAttr(), op.getPaddingAttr(),
                                                 op.getDilationAttr(),
                                                 op.getChannelsLastAttr(),
                                                 op.getGroupsAttr())
                   .getResult());
  if (op.getChannelsLast())
    return channelsLastWithoutLibrary(op);
  ArrayRef<int64_t> gs = shapeOf(g), ws = shapeOf(w);
  int64_t n = gs[0], o = ws[0], c = ws[1], kh = ws[2], kw = ws[3];
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
  Type et = typeOf(w).getElementType();
  int64_t unitStride[2] = {1, 1};
  int64_t pad[2] = {p[0], p[1]};
  if (groups != 1) {
    // Per group the same: the kernel [G, F, C, KH, KW] flipped and its
    // channel axes swapped, (g, c, f, kh, kw) reading w[g, f, c, k-1-kh,
    // k-1-kw], over gpad [N, G, F, ...].
    int64_t f = o / groups;
    AffineMap flipMap = AffineMap::get(
        5, 0,
        {dim(0), dim(2), dim(1), getAffineConstantExpr(kh - 1, ctx) - dim(3),
         getAffineConstantExpr(kw - 1, ctx) - dim(4)},
        ctx);
    Value flipped =
        linalg::GenericOp::create(
            b, loc, TypeRange{RankedTensorType::get({groups, c, f, kh, kw}, et)},
            ValueRange{tb.reshape(w, {groups, f, c, kh, kw})},
            ValueRange{tb.empty({groups, c, f, kh, kw}, et)},
            {flipMap, AffineMap::getMultiDimIdentityMap(5, ctx)},
            SmallVector<utils::IteratorType>(5, utils::IteratorType::parallel),
            [](OpBuilder &nb, Location l, ValueRange a) {
              linalg::YieldOp::create(nb, l, a[0]);
            })
            .getResult(0);
    ArrayRef<int64_t> ps = shapeOf(gpad);
    Value full = groupedConv(tb, tb.reshape(gpad, {n, groups, f, ps[2], ps[3]}), flipped,
                             {n, groups, c, hp, wp}, unitStride, d);
    return one(tb.cropSpatial(tb.reshape(full, {n, groups * c, hp, wp}), pad, out));
  }
  // The kernel flipped and transposed, materialized: (c, o, kh, kw) reads
  // w[o, c, k-1-kh, k-1-kw].
  AffineMap flipMap =
      AffineMap::get(4, 0,
                     {dim(1), dim(0), getAffineConstantExpr(kh - 1, ctx) - dim(2),
                      getAffineConstantExpr(kw - 1, ctx) - dim(3)},
                     ctx);
  Value flipped = linalg::GenericOp::create(
                      b, loc, TypeRange{RankedTensorType::get({c, o, kh, kw}, et)},
                      ValueRange{w}, ValueRange{tb.empty({c, o, kh, kw}, et)},
                      {flipMap, AffineMap::getMultiDimIdentityMap(4, ctx)},
                      SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
                      [](OpBuilder &nb, Location l, ValueRange a) {
                        linalg::YieldOp::create(nb, l, a[0]);
                      })
                      .getResult(0);
  Value full = namedConv(tb, gpad, flipped, {n, c, hp, wp}, unitStride, d);
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
  if (forLibrary(op, /*cpuOnly=*/true))
    return one(train::Pool2dForwardOp::create(
                   tb.builder(), tb.location(), TypeRange{op.getType()},
                   ValueRange{a.getInput()}, ValueRange{}, op.getKernelAttr(),
                   op.getStrideAttr(), op.getPaddingAttr(),
                   tb.builder().getBoolAttr(isMax), op.getChannelsLastAttr())
                   .getResult(0));
  if (op.getChannelsLast())
    return channelsLastWithoutLibrary(op);
  return one(pool2d(tb, a.getInput(), op.getType(), windowOf(op, isMax)));
}

Results lowerPoolGrad(TensorBuilder &tb, Pool2dGradOp op, Pool2dGradOp::Adaptor a) {
  if (forLibrary(op, /*cpuOnly=*/true))
    return one(train::Pool2dBackwardOp::create(
                   tb.builder(), tb.location(), TypeRange{op.getType()},
                   ValueRange{a.getInput(), a.getGrad()}, ValueRange{},
                   op.getKernelAttr(), op.getStrideAttr(), op.getPaddingAttr(),
                   op.getMaxAttr(), op.getChannelsLastAttr())
                   .getResult(0));
  if (op.getChannelsLast())
    return channelsLastWithoutLibrary(op);
  return one(pool2dGrad(tb, a.getInput(), a.getGrad(), windowOf(op, op.getMax())));
}

Results lowerGlobalAvgPool(TensorBuilder &tb, GlobalAvgPool2dOp op,
                           GlobalAvgPool2dOp::Adaptor a) {
  if (op.getChannelsLast())
    return one(tb.mean(a.getInput(), {1, 2}, false));
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
