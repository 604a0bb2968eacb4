//===- HostMemory.cpp - Host reads of device memory through the runtime ---===//

#include "compiler/Target/CUDA/Passes.h"
#include "compiler/Target/Host/CallBuilder.h"
#include "runtime/contract/AbiNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAHOSTMEMORY
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

/// Whether `v` is memory of the host: a stack slot or a constant table.
bool onHost(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<memref::AllocaOp, memref::GetGlobalOp>(def))
      return true;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return false;
    v = view.getViewSource();
  }
  return false;
}

/// The byte offset of `load`'s element from the aligned pointer of the
/// base buffer `meta` describes.
Value byteOffset(OpBuilder &b, memref::LoadOp load,
                 memref::ExtractStridedMetadataOp meta) {
  Location loc = load.getLoc();
  Value elements = meta.getOffset();
  for (auto [i, index] : llvm::enumerate(load.getIndices()))
    elements = arith::AddIOp::create(
        b, loc, elements,
        arith::MulIOp::create(b, loc, index, meta.getStrides()[i]));
  unsigned bytes = (load.getType().getIntOrFloatBitWidth() + 7) / 8;
  Value scaled = arith::MulIOp::create(
      b, loc, elements, arith::ConstantIndexOp::create(b, loc, bytes));
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), scaled);
}

void readThroughRuntime(ModuleOp module, memref::LoadOp load) {
  host::CallBuilder cb(module, load);
  OpBuilder &b = cb.builder();
  Location loc = load.getLoc();
  Type et = load.getType();
  // The slot is the function's, in its entry block: a read in a loop does
  // not grow the stack.
  auto slotType = MemRefType::get({}, et);
  auto function = load->getParentOfType<func::FuncOp>();
  OpBuilder entry = OpBuilder::atBlockBegin(&function.getBody().front());
  Value slot = memref::AllocaOp::create(entry, loc, slotType);
  // The slot's pointer, and the element's: the buffer's base plus its
  // offset (the base is the aligned pointer of the whole buffer).
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, load.getMemRef());
  Value base = cb.pointer(meta.getBaseBuffer());
  Value offset = byteOffset(b, load, meta);
  int64_t bytes = (et.getIntOrFloatBitWidth() + 7) / 8;
  cb.call(loc, abi::sinter_cuda_read,
          {cb.pointer(slot), base, offset, cb.constant(loc, bytes)});
  Value value = memref::LoadOp::create(b, loc, slot, ValueRange{});
  load.replaceAllUsesWith(value);
  load.erase();
}

struct CUDAHostMemory : public impl::CUDAHostMemoryBase<CUDAHostMemory> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<memref::LoadOp> loads;
    for (auto function : module.getOps<func::FuncOp>())
      function.walk([&](memref::LoadOp load) {
        if (!load->getParentOfType<gpu::LaunchOp>() && !onHost(load.getMemRef()))
          loads.push_back(load);
      });
    for (memref::LoadOp load : loads)
      readThroughRuntime(module, load);
  }
};

} // namespace
} // namespace sinter::cuda
