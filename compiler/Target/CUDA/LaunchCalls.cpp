//===- LaunchCalls.cpp - The kernel binary, and launches through the runtime ===//

#include "compiler/Target/CUDA/ArgumentSlots.h"
#include "compiler/Target/CUDA/Passes.h"
#include "compiler/Target/Host/CallBuilder.h"
#include "dialects/Sinter/IR/SinterAttrs.h"
#include "runtime/contract/AbiNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDALAUNCHCALLS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

LogicalResult lowerLaunch(ModuleOp module, gpu::LaunchFuncOp launch,
                          const llvm::StringMap<int64_t> &indexOf, Value slots) {
  auto it = indexOf.find(launch.getKernelName().getValue());
  if (it == indexOf.end())
    return launch.emitError("internal error: a launch of a kernel outside ")
           << "sinter.cuda_kernels";
  host::CallBuilder cb(module, launch);
  OpBuilder &b = cb.builder();
  Location loc = launch.getLoc();
  ValueRange operands = launch.getKernelOperands();
  for (auto [i, operand] : llvm::enumerate(operands)) {
    FailureOr<Value> slot = asSlot(b, loc, operand);
    if (failed(slot))
      return launch.emitError("internal error: a kernel argument of type ")
             << operand.getType();
    memref::StoreOp::create(b, loc, *slot, slots,
                            ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
  }
  auto asI64 = [&](Value index) -> Value {
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  };
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  Value shared = launch.getDynamicSharedMemorySize()
                     ? Value(arith::ExtUIOp::create(
                           b, loc, b.getI64Type(),
                           launch.getDynamicSharedMemorySize()))
                     : cb.constant(loc, 0);
  cb.call(loc, abi::sinter_cuda_launch,
          {cb.constant(loc, it->second), asI64(grid.x), asI64(grid.y),
           asI64(grid.z), asI64(block.x), asI64(block.y), asI64(block.z),
           shared, cb.constant(loc, int64_t(operands.size())),
           cb.pointer(slots)});
  launch.erase();
  return success();
}

struct CUDALaunchCalls : public impl::CUDALaunchCallsBase<CUDALaunchCalls> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::BinaryOp> binaries(module.getOps<gpu::BinaryOp>());
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    if (binaries.empty() && launches.empty())
      return;
    ArrayAttr kernels = attrs::cudaKernels.get(module);
    if (binaries.size() != 1 || !kernels) {
      module.emitError("internal error: the CUDA kernels must be one binary, "
                       "listed in sinter.cuda_kernels");
      return signalPassFailure();
    }
    gpu::BinaryOp binary = binaries.front();
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);

    // The names table: "name\tsource line\0" per kernel, in index order.
    llvm::StringMap<int64_t> indexOf;
    std::string names;
    for (auto [i, entry] : llvm::enumerate(kernels)) {
      auto pair = cast<ArrayAttr>(entry);
      StringRef name = cast<StringAttr>(pair[0]).getValue();
      indexOf[name] = int64_t(i);
      names += name.str() + "\t" + cast<StringAttr>(pair[1]).str();
      names.push_back('\0');
    }
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    host::addByteConstant(b, binary.getLoc(), abi::sinter_cuda_module,
                          object.getObject().getValue());
    host::addByteConstant(b, binary.getLoc(), abi::sinter_cuda_kernel_names, names);
    llvm::MapVector<func::FuncOp, int64_t> mostArguments;
    for (gpu::LaunchFuncOp launch : launches) {
      int64_t &most = mostArguments[launch->getParentOfType<func::FuncOp>()];
      most = std::max<int64_t>(most, launch.getKernelOperands().size());
    }
    DenseMap<func::FuncOp, Value> slots;
    for (auto [function, count] : mostArguments)
      slots[function] = slotArray(function, count);
    for (gpu::LaunchFuncOp launch : launches)
      if (failed(lowerLaunch(module, launch, indexOf,
                             slots.lookup(launch->getParentOfType<func::FuncOp>()))))
        return signalPassFailure();
    binary.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

} // namespace
} // namespace sinter::cuda
