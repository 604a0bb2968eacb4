//===- BareKernelArguments.cpp - Buffers a kernel can take as pointers ----===//

#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDABAREKERNELARGUMENTS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

/// The constant global `v` is, or a view of, through its chain of views;
/// empty when `v` is anything else.
SmallVector<Operation *> constantGlobalChain(Value v) {
  SmallVector<Operation *> chain;
  while (Operation *def = v.getDefiningOp()) {
    chain.push_back(def);
    if (auto get = dyn_cast<memref::GetGlobalOp>(def)) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          get, get.getNameAttr());
      if (!global || !global.getConstant())
        return {};
      std::reverse(chain.begin(), chain.end());
      return chain;
    }
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else
      return {};
  }
  return {};
}

/// A constant table (a memref.global, such as a causal mask) lives at a
/// host address: a kernel that reads it takes its own memref.get_global,
/// and the outlining copies the global into the kernels' module.
void readConstantGlobalsInside(gpu::LaunchOp launch) {
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(launch.getBody(), used);
  OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
  for (Value v : used) {
    SmallVector<Operation *> chain = constantGlobalChain(v);
    if (chain.empty())
      continue;
    IRMapping map;
    for (Operation *op : chain)
      b.clone(*op, map);
    replaceAllUsesInRegionWith(v, map.lookup(v), launch.getBody());
  }
}

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
    getOperation().walk([](gpu::LaunchOp launch) {
      readConstantGlobalsInside(launch);
      passStridedViewsAsBases(launch);
    });
  }
};

} // namespace
} // namespace sinter::cuda
