//===- MergeKernels.cpp - One module of kernels, equal kernels once -------===//

#include "compiler/Target/CUDA/Passes.h"
#include "compiler/Target/Host/SourceText.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAMERGEKERNELS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kModuleName = "sinter_kernels";

/// The kernel's text under a fixed name: equal keys, equal kernels.
std::string structuralKey(gpu::GPUFuncOp kernel) {
  StringAttr name = kernel.getNameAttr();
  kernel.setName("kernel");
  std::string key;
  llvm::raw_string_ostream os(key);
  kernel->print(os, OpPrintingFlags().useLocalScope().assumeVerified());
  kernel.setName(name);
  return key;
}

/// A PTX identifier: letters, digits and '_' (`gpt.h.fwd` -> `gpt_h_fwd`).
std::string ptxName(StringRef name) {
  std::string out;
  for (char c : name)
    out.push_back(llvm::isAlnum(c) ? c : '_');
  return out;
}

struct CUDAMergeKernels : public impl::CUDAMergeKernelsBase<CUDAMergeKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> outlined(module.getOps<gpu::GPUModuleOp>());
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    if (outlined.empty())
      return;

    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    auto merged = gpu::GPUModuleOp::create(b, module.getLoc(), kModuleName);
    SymbolTable kernels(merged);
    // Each kernel's text -> the one kept; launches in program order name
    // the kernels after their function.
    llvm::StringMap<gpu::GPUFuncOp> kept;
    DenseMap<Operation *, gpu::GPUFuncOp> keptFor; // outlined kernel -> kept
    SmallVector<std::pair<gpu::LaunchFuncOp, gpu::GPUFuncOp>> retarget;
    SmallVector<Attribute> table;
    for (gpu::LaunchFuncOp launch : launches) {
      auto old = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      gpu::GPUFuncOp now = old ? keptFor.lookup(old) : gpu::GPUFuncOp();
      if (old && !now) {
        auto [it, added] = kept.try_emplace(structuralKey(old), old);
        now = it->second;
        keptFor[old] = now;
        if (added) {
          auto parent = launch->getParentOfType<func::FuncOp>();
          old->moveBefore(merged.getBody(), merged.getBody()->end());
          old.setName(ptxName(parent.getName()) + "_k" + std::to_string(table.size()));
          kernels.insert(old);
          table.push_back(
              b.getStrArrayAttr({old.getName(), host::sourceOf(launch.getLoc())}));
        }
      }
      if (!now) {
        launch.emitError("internal error: a launch of an unknown kernel");
        return signalPassFailure();
      }
      retarget.push_back({launch, now});
    }
    for (auto [launch, kernel] : retarget)
      launch.setKernelAttr(SymbolRefAttr::get(
          merged.getNameAttr(), {FlatSymbolRefAttr::get(kernel.getNameAttr())}));
    // The constant tables the kept kernels read (copied with each kernel by
    // the outlining), once each.
    for (gpu::GPUModuleOp m : outlined)
      for (auto global : llvm::make_early_inc_range(m.getOps<memref::GlobalOp>()))
        if (!kernels.lookup(global.getSymName())) {
          global->moveBefore(merged.getBody(), merged.getBody()->end());
          kernels.insert(global);
        }
    for (gpu::GPUModuleOp m : outlined)
      m.erase();
    attrs::cudaKernels.set(module, b.getArrayAttr(table));
  }
};

} // namespace
} // namespace sinter::cuda
