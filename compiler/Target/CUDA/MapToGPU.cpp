//===- MapToGPU.cpp - Loop nests over device memory become kernels --------===//

#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAMAPTOGPU
#include "compiler/Target/CUDA/Passes.h.inc"
} // namespace sinter::cuda

using namespace mlir;

namespace sinter::cuda {
namespace {

constexpr int64_t kThreadsPerBlock = 256;

/// Whether `op` or an op inside it reads or writes a buffer.
bool touchesMemory(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isa<memref::LoadOp, memref::StoreOp>(inner)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `op` holds host work: calls (the runtime, a block) or launches.
bool holdsHostWork(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isa<func::CallOp, gpu::LaunchOp>(inner) ? WalkResult::interrupt()
                                                      : WalkResult::advance();
      })
      .wasInterrupted();
}

Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// A launch of `blocks` blocks of `threads` threads, its body empty but for
/// the terminator; the builder is left before it.
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, Value blocks,
                           Value threads) {
  Value one = index(b, loc, 1);
  auto launch =
      gpu::LaunchOp::create(b, loc, blocks, one, one, threads, one, one);
  Block &body = launch.getBody().front();
  b.setInsertionPointToEnd(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  return launch;
}

/// for (i0, .., in) in parallel: body  ->  one thread per iteration.
void launchParallel(scf::ParallelOp loop) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  SmallVector<Value> counts;
  Value total = index(b, loc, 1);
  for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(), loop.getUpperBound(),
                                       loop.getStep())) {
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value count = arith::CeilDivUIOp::create(b, loc, span, step);
    counts.push_back(count);
    total = arith::MulIOp::create(b, loc, total, count);
  }
  Value threads = index(b, loc, kThreadsPerBlock);
  // At least one block: a launch of none is an error, and a loop of no
  // iterations runs none anyway (every thread fails the bound check).
  Value blocks = arith::MaxUIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, total, threads), index(b, loc, 1));
  gpu::LaunchOp launch = createLaunch(b, loc, blocks, threads);
  Value flat = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, launch.getBlockIds().x, threads),
      launch.getThreadIds().x);
  Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, flat, total);
  auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  // The innermost dimension varies fastest: neighbouring threads touch
  // neighbouring elements.
  IRMapping map;
  Value rest = flat;
  for (int64_t d = int64_t(counts.size()) - 1; d >= 0; --d) {
    Value i = arith::RemUIOp::create(b, loc, rest, counts[d]);
    rest = arith::DivUIOp::create(b, loc, rest, counts[d]);
    Value iv = arith::AddIOp::create(
        b, loc, loop.getLowerBound()[d],
        arith::MulIOp::create(b, loc, i, loop.getStep()[d]));
    map.map(loop.getInductionVars()[d], iv);
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, map);
  loop.erase();
}

/// `op` alone on one GPU thread.
gpu::LaunchOp launchSingle(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Value one = index(b, loc, 1);
  gpu::LaunchOp launch = createLaunch(b, loc, one, one);
  op->moveBefore(launch.getBody().front().getTerminator());
  return launch;
}

/// Scalar work on the host between loads and a store (a loss share summed
/// into its accumulator) belongs in the store's kernel: each load on the
/// host would wait for the device. The loads and arithmetic the stored
/// value comes from, in `store`'s block, are computed again in the kernel;
/// the host's copies die unless something else uses them.
void storeWithItsScalars(memref::StoreOp store) {
  Block *block = store->getBlock();
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist(store->getOperands());
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != block || slice.contains(def))
      continue;
    bool scalar = def->getNumRegions() == 0 &&
                  llvm::all_of(def->getResultTypes(), [](Type t) {
                    return t.isIntOrIndexOrFloat();
                  });
    if (!scalar || !(isa<memref::LoadOp>(def) || isMemoryEffectFree(def)))
      continue;
    slice.insert(def);
    worklist.append(def->operand_begin(), def->operand_end());
  }
  gpu::LaunchOp launch = launchSingle(store);
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
  IRMapping map;
  for (Operation *op : ordered)
    b.clone(*op, map);
  for (OpOperand &operand : store->getOpOperands())
    operand.set(map.lookupOrDefault(operand.get()));
}

/// Maps the ops of a host block; recurses into host control flow.
void mapBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (isa<gpu::LaunchOp>(op))
      continue;
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      launchParallel(loop);
      continue;
    }
    bool loopOrBranch = isa<scf::ForOp, scf::IfOp, scf::WhileOp>(op);
    if (loopOrBranch && holdsHostWork(&op)) {
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          mapBlock(inner);
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op))
      storeWithItsScalars(store);
    else if (loopOrBranch && touchesMemory(&op))
      launchSingle(&op);
  }
}

struct CUDAMapToGPU : public impl::CUDAMapToGPUBase<CUDAMapToGPU> {
  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      for (Block &block : function.getBody())
        mapBlock(block);
    }
  }
};

} // namespace
} // namespace sinter::cuda
