//===- UnrollSums.cpp - A thread's summing loop, several rows at once -----===//
//
// A thread that sums a column (a split bias gradient's partial) loads an
// element, adds it to the sum it carries, and only then reaches the next
// iteration's load: a warp has one load in flight, and a memory-bound
// kernel waits on latency instead of bandwidth. Unrolled, the iterations'
// loads of buffers the loop never writes go first, so several are in
// flight at once; the sum still adds them one after another, in order.
// A loop that walks a row again after its reduction (cross-entropy's
// gradient, a layer norm's normalization) is the same: each iteration's
// store keeps the next iteration's load waiting, unless the load's bytes
// are proven apart from every store's.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/BufferAccesses.h"
#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAUNROLLSUMS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

/// Iterations an unrolled loop's body runs.
constexpr int64_t kUnroll = 4;

/// Whether `loop` starts at its thread's index along x, in a launch of
/// at most `step` threads along x: it runs from below its upper bound
/// whenever that bound is at least `step`.
bool startsAtThread(scf::ForOp loop, int64_t step) {
  auto launch = loop->getParentOfType<gpu::LaunchOp>();
  std::optional<int64_t> threads = getConstantIntValue(launch.getBlockSizeX());
  Value lb = loop.getLowerBound();
  bool atThread = lb == launch.getThreadIds().x;
  if (auto id = lb.getDefiningOp<gpu::ThreadIdOp>())
    atThread |= id.getDimension() == gpu::Dimension::x;
  return atThread && threads && *threads <= step;
}

/// Whether `loop` carries nothing and stores what its iterations compute,
/// each (a walk over a row after its reduction) or some (a scatter-add's
/// rows that match its thread's).
bool storesEachIteration(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 0)
    return false;
  bool stores = false;
  loop.getBody()->walk([&](memref::StoreOp) { stores = true; });
  return stores;
}

/// Whether `loop` carries a sum or stores each iteration, has no loop
/// inside, and runs at least two unrolled bodies: constant bounds with a
/// multiple of kUnroll iterations (no remainder), or a block's threads
/// striding over a row from their own indices, at most `step` of them,
/// over a constant extent of at least 2 * kUnroll steps (a remainder loop
/// takes the last iterations).
bool isUnrollable(scf::ForOp loop) {
  bool inner = false;
  loop.getBody()->walk([&](LoopLikeOpInterface) { inner = true; });
  if ((loop.getNumRegionIterArgs() == 0 && !storesEachIteration(loop)) || inner)
    return false;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!ub || !step || *step <= 0)
    return false;
  if (lb) {
    int64_t trips = *ub > *lb ? (*ub - *lb + *step - 1) / *step : 0;
    return trips % kUnroll == 0 && trips >= 2 * kUnroll;
  }
  return startsAtThread(loop, *step) && *ub / *step >= 2 * kUnroll;
}

/// Adds to `slice` what `op` needs from `body` before it can run, when
/// that is computation on the induction variable and values from outside
/// (not what the loop carries). False otherwise.
bool collectIndexOps(Operation *op, Block *body, Value iv,
                     llvm::SetVector<Operation *> &slice) {
  for (Value operand : op->getOperands()) {
    if (operand == iv)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(operand)) {
      if (arg.getOwner() == body)
        return false;
      continue;
    }
    Operation *def = operand.getDefiningOp();
    if (def->getBlock() != body || slice.contains(def))
      continue;
    if (!isMemoryEffectFree(def) || def->getNumRegions() != 0 ||
        !collectIndexOps(def, body, iv, slice))
      return false;
    slice.insert(def);
  }
  return true;
}

/// Moves the loads of buffers the loop never writes, with their index
/// computations, to the top of its body, in their order. A summing loop's
/// buffers are distinct, as for the register accumulators; in a loop that
/// stores each iteration, a load moves only when `overlaps` proves its
/// buffer shares no byte with any the loop stores to.
void loadsFirst(scf::ForOp loop, bool storesEach, BufferOverlaps &overlaps) {
  Block *body = loop.getBody();
  // Stores are the only writes in these loops (map-to-gpu makes them);
  // anything else that may write leaves the body as it is.
  DenseSet<Value> written;
  bool otherWrites = false;
  body->walk([&](Operation *op) {
    if (auto store = dyn_cast<memref::StoreOp>(op))
      written.insert(store.getMemRef());
    else if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(op) &&
             !op->hasTrait<OpTrait::IsTerminator>() &&
             // A conditional store's `scf.if`: the walk sees what it holds.
             !(storesEach && op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()))
      otherWrites = true;
  });
  if (otherWrites)
    return;
  llvm::SetVector<Operation *> slice;
  for (Operation &op : *body) {
    auto load = dyn_cast<memref::LoadOp>(op);
    if (!load || written.contains(load.getMemRef()))
      continue;
    if (storesEach && llvm::any_of(written, [&](Value stored) {
          return !overlaps.disjoint(load.getMemRef(), stored);
        }))
      continue;
    llvm::SetVector<Operation *> needed;
    if (!collectIndexOps(load, body, loop.getInductionVar(), needed))
      continue;
    slice.insert(needed.begin(), needed.end());
    slice.insert(load);
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *anchor = nullptr;
  for (Operation &op : *body)
    if (!slice.contains(&op)) {
      anchor = &op;
      break;
    }
  for (Operation *op : ordered)
    if (anchor->isBeforeInBlock(op))
      op->moveBefore(anchor);
}

struct CUDAUnrollSums : public impl::CUDAUnrollSumsBase<CUDAUnrollSums> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](gpu::LaunchOp launch) {
      launch.getBody().walk([&](scf::ForOp loop) {
        if (isUnrollable(loop))
          loops.push_back(loop);
      });
    });
    BufferOverlaps overlaps;
    for (scf::ForOp loop : loops) {
      bool storesEach = storesEachIteration(loop);
      FailureOr<UnrolledLoopInfo> unrolled = loopUnrollByFactor(loop, kUnroll);
      if (succeeded(unrolled) && unrolled->mainLoopOp)
        loadsFirst(*unrolled->mainLoopOp, storesEach, overlaps);
    }
  }
};

} // namespace
} // namespace sinter::cuda
