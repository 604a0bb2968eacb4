//===- RegisterAccumulators.cpp - A thread's running sum in a register ----===//
//
// A reduction that runs a thread per output (a split bias gradient's
// partial, a short row) sums in a loop that loads its output element, adds
// and stores it on every iteration: on a GPU each store goes out to L2, 8
// bytes of f64 for each 4 bytes read. Inside the kernels, such a sum is
// carried in a register instead (host::carryAccumulators); its order is
// unchanged.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/RegisterAccumulators.h"
#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAREGISTERACCUMULATORS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

struct CUDARegisterAccumulators
    : public impl::CUDARegisterAccumulatorsBase<CUDARegisterAccumulators> {
  void runOnOperation() override {
    // Only inside kernels: a loop of the host code would carry its sum
    // through host reads of device memory.
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](gpu::LaunchOp launch) {
      launch.getBody().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    });
    host::carryAccumulators(loops, [](scf::ForOp, BlockArgument, Value) {});
  }
};

} // namespace
} // namespace sinter::cuda
