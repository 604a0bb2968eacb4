//===- PlanMemory.cpp - A step's buffers in one arena, by liveness --------===//

#include "compiler/MemoryPlan/MemoryPlanner.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace sinter {
#define GEN_PASS_DEF_PLANMEMORY
#include "compiler/Transforms/Passes.h.inc"
} // namespace sinter

using namespace mlir;

namespace sinter {
namespace {

/// Bytes of a static memref.
uint64_t byteSize(MemRefType type) {
  uint64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

/// The position (in `entry`) of the last op that uses `root` or a view of it.
int64_t lastUse(Value root, Block &entry,
                const DenseMap<Operation *, int64_t> &position,
                SmallVectorImpl<Operation *> &deallocs) {
  int64_t last = -1;
  SmallVector<Value> worklist = {root};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<memref::DeallocOp>(user)) {
        deallocs.push_back(user);
        continue;
      }
      // A buffer result of a user may alias the buffer: a view, or a loop
      // that carries it (scf.for iter_args). Follow them all.
      for (Value r : user->getResults())
        if (isa<BaseMemRefType>(r.getType()))
          worklist.push_back(r);
      Operation *top = entry.findAncestorOpInBlock(*user);
      if (top)
        last = std::max(last, position.lookup(top));
    }
  }
  return last;
}

LogicalResult planStep(func::FuncOp step) {
  Block &entry = step.getBody().front();
  DenseMap<Operation *, int64_t> position;
  int64_t i = 0;
  for (Operation &op : entry)
    position[&op] = i++;

  SmallVector<memref::AllocOp> allocs;
  WalkResult walk = step.walk([&](memref::AllocOp alloc) {
    if (alloc->getBlock() != &entry || !alloc.getType().hasStaticShape() ||
        !alloc.getType().getLayout().isIdentity()) {
      alloc.emitError("memory planning needs static, top-level allocations "
                      "with the identity layout");
      return WalkResult::interrupt();
    }
    allocs.push_back(alloc);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (allocs.empty())
    return success();

  std::vector<memory::Lifetime> lifetimes;
  SmallVector<Operation *> deallocs;
  for (memref::AllocOp alloc : allocs) {
    int64_t first = position.lookup(alloc);
    int64_t last = std::max(first, lastUse(alloc, entry, position, deallocs));
    lifetimes.push_back({byteSize(alloc.getType()), first, last});
  }
  memory::ArenaPlan plan = memory::planArena(lifetimes);

  OpBuilder b(step.getContext());
  auto arenaType = MemRefType::get({int64_t(plan.size)}, b.getI8Type());
  unsigned index = step.getNumArguments();
  if (failed(step.insertArgument(index, arenaType,
                                 b.getDictionaryAttr(b.getNamedAttr(
                                     "sinter.workspace", b.getUnitAttr())),
                                 step.getLoc())))
    return failure();
  Value arena = step.getArgument(index);
  for (Operation *dealloc : deallocs)
    dealloc->erase();
  for (auto [alloc, offset] : llvm::zip(allocs, plan.offsets)) {
    b.setInsertionPoint(alloc);
    Value at = arith::ConstantIndexOp::create(b, alloc.getLoc(), int64_t(offset));
    Value view = memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(), arena,
                                        at, ValueRange{});
    alloc.replaceAllUsesWith(view);
    alloc.erase();
  }
  step->setAttr("sinter.arena_bytes", b.getI64IntegerAttr(plan.size));
  step->setAttr("sinter.unplanned_bytes", b.getI64IntegerAttr(plan.sumOfSizes));
  return success();
}

struct PlanMemory : public impl::PlanMemoryBase<PlanMemory> {
  void runOnOperation() override {
    for (auto step : getOperation().getOps<func::FuncOp>())
      if (step->hasAttr("sinter.phase") && !step.isExternal() &&
          failed(planStep(step)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace sinter
