//===- BareKernelArguments.cpp - Buffers a kernel can take as pointers ----===//

#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/RegionUtils.h"

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDABAREKERNELARGUMENTS
#include "compiler/Target/CUDA/Passes.h.inc"
} // namespace sinter::cuda

using namespace mlir;

namespace sinter::cuda {
namespace {

/// A kernel takes buffers as bare pointers: a view with strides or an
/// offset of its own (a slice) crosses as its allocation's base pointer and
/// its offset, and is rebuilt inside the kernel.
void passStridedViewsAsBases(gpu::LaunchOp launch) {
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(launch.getBody(), used);
  for (Value v : used) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || (type.getLayout().isIdentity() && type.hasStaticShape()))
      continue;
    OpBuilder b(launch);
    Location loc = v.getLoc();
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, v);
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)))
      continue;
    b.setInsertionPointToStart(&launch.getBody().front());
    OpFoldResult offsetValue =
        ShapedType::isDynamic(offset) ? OpFoldResult(meta.getOffset())
                                      : OpFoldResult(b.getIndexAttr(offset));
    SmallVector<OpFoldResult> sizes, strideValues;
    for (auto [i, size] : llvm::enumerate(type.getShape()))
      sizes.push_back(ShapedType::isDynamic(size)
                          ? OpFoldResult(meta.getSizes()[i])
                          : OpFoldResult(b.getIndexAttr(size)));
    for (auto [i, stride] : llvm::enumerate(strides))
      strideValues.push_back(ShapedType::isDynamic(stride)
                                 ? OpFoldResult(meta.getStrides()[i])
                                 : OpFoldResult(b.getIndexAttr(stride)));
    Value rebuilt = memref::ReinterpretCastOp::create(
        b, loc, type, meta.getBaseBuffer(), offsetValue, sizes, strideValues);
    v.replaceUsesWithIf(rebuilt, [&](OpOperand &use) {
      return launch->isProperAncestor(use.getOwner());
    });
  }
}

struct CUDABareKernelArguments
    : public impl::CUDABareKernelArgumentsBase<CUDABareKernelArguments> {
  void runOnOperation() override {
    getOperation().walk([](gpu::LaunchOp launch) { passStridedViewsAsBases(launch); });
  }
};

} // namespace
} // namespace sinter::cuda
