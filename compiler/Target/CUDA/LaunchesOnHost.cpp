//===- LaunchesOnHost.cpp - Kernels as host loops, for tests on a CPU ------===//
//
// The generated kernels decide which thread computes which element; a
// mistake there (an element no thread writes, or two threads write) is
// visible only when the kernel runs. Without a GPU, a kernel whose threads
// never meet can still run: one thread after another, as loops on the CPU.
// Tests lower the result as any host code and compare what it computed.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDALAUNCHESONHOST
#include "compiler/Target/CUDA/Passes.h.inc"
} // namespace sinter::cuda

using namespace mlir;

namespace sinter::cuda {
namespace {

/// Whether `launch`'s threads work alone: they share no memory and never
/// wait for or exchange values with each other.
bool threadsWorkAlone(gpu::LaunchOp launch) {
  if (!launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty() || launch.hasClusterSize() ||
      launch.getAsyncToken() || launch.getDynamicSharedMemorySize() ||
      !launch.getBody().hasOneBlock())
    return false;
  return !launch.getBody()
              .walk([](Operation *op) {
                return isa<gpu::BarrierOp, gpu::AllReduceOp, gpu::ShuffleOp,
                           gpu::SubgroupReduceOp>(op)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted();
}

/// `launch` as loops over its blocks and then its threads (z, y, x, so x
/// varies fastest), its body run once per thread.
void runOnHost(gpu::LaunchOp launch) {
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  IRMapping map;
  auto loopOver = [&](Value extent, Value id, Value size) {
    auto loop = scf::ForOp::create(b, loc, zero, extent, one);
    b.setInsertionPointToStart(loop.getBody());
    map.map(id, loop.getInductionVar());
    map.map(size, extent);
  };
  loopOver(grid.z, launch.getBlockIds().z, launch.getGridSize().z);
  loopOver(grid.y, launch.getBlockIds().y, launch.getGridSize().y);
  loopOver(grid.x, launch.getBlockIds().x, launch.getGridSize().x);
  loopOver(block.z, launch.getThreadIds().z, launch.getBlockSize().z);
  loopOver(block.y, launch.getThreadIds().y, launch.getBlockSize().y);
  loopOver(block.x, launch.getThreadIds().x, launch.getBlockSize().x);
  for (Operation &op : launch.getBody().front().without_terminator())
    b.clone(op, map);
  launch.erase();
}

struct CUDALaunchesOnHost : public impl::CUDALaunchesOnHostBase<CUDALaunchesOnHost> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp launch) {
      if (threadsWorkAlone(launch))
        launches.push_back(launch);
    });
    for (gpu::LaunchOp launch : launches)
      runOnHost(launch);
  }
};

} // namespace
} // namespace sinter::cuda
