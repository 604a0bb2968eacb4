//===- PlanMemory.cpp - A step's buffers in one arena, by liveness --------===//

#include "compiler/MemoryPlan/MemoryPlanner.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <algorithm>

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_PLANMEMORY
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// Bytes of a static memref.
uint64_t byteSize(MemRefType type) {
  uint64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * ((bits + 7) / 8);
}

/// The position (in `block`) of the last op that uses `root` or a view of
/// it, or failure when the buffer leaves its block through a terminator
/// (a loop iteration's buffer carried into the next).
FailureOr<int64_t> lastUse(Value root, Block &block,
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
      if (user->getBlock() == &block && user->hasTrait<OpTrait::IsTerminator>())
        return failure();
      // A buffer result of a user may alias the buffer: a view, or a loop
      // that carries it (scf.for iter_args). Follow them all.
      for (Value r : user->getResults())
        if (isa<BaseMemRefType>(r.getType()))
          worklist.push_back(r);
      Operation *top = block.findAncestorOpInBlock(*user);
      if (top)
        last = std::max(last, position.lookup(top));
    }
  }
  return last;
}

/// Makes the arena of a block once its size is known.
using ArenaMaker = function_ref<FailureOr<Value>(uint64_t bytes)>;

struct PlannedBytes {
  uint64_t arena = 0;
  uint64_t unplanned = 0;
  /// The most bytes of collectives' buffers (`sinter.communication`) live at
  /// once in the arena.
  uint64_t communication = 0;
};

/// The largest sum of sizes of the lifetimes live at one position.
uint64_t peakLive(const std::vector<memory::Lifetime> &lifetimes) {
  std::vector<std::pair<int64_t, int64_t>> events; // position, +size / -size
  for (const memory::Lifetime &l : lifetimes) {
    events.push_back({l.first, int64_t(l.size)});
    events.push_back({l.last + 1, -int64_t(l.size)});
  }
  std::sort(events.begin(), events.end(), [](auto a, auto b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;
  });
  int64_t live = 0, peak = 0;
  for (auto [at, delta] : events)
    peak = std::max(peak, live += delta);
  return uint64_t(peak);
}

/// Plans the allocations of `block` into one arena by liveness. Blocks
/// nested in its ops (a loop's body) are planned first, each into an arena
/// of its own that is allocated, in `block`, just before the op: buffers of
/// one loop iteration share memory with each other, and the loop's arena
/// with whatever `block` no longer needs while the loop runs.
FailureOr<PlannedBytes> planBlock(Block &block, ArenaMaker makeArena) {
  PlannedBytes bytes;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    for (Region &region : op.getRegions()) {
      for (Block &inner : region) {
        auto innerArena = [&](uint64_t size) -> FailureOr<Value> {
          OpBuilder b(&op);
          auto arena = memref::AllocOp::create(
              b, op.getLoc(), MemRefType::get({int64_t(size)}, b.getI8Type()));
          attrs::nestedArena.set(arena, b.getUnitAttr());
          return Value(arena);
        };
        FailureOr<PlannedBytes> nested = planBlock(inner, innerArena);
        if (failed(nested))
          return failure();
        bytes.unplanned += nested->unplanned;
      }
    }
  }

  DenseMap<Operation *, int64_t> position;
  int64_t i = 0;
  for (Operation &op : block)
    position[&op] = i++;
  SmallVector<memref::AllocOp> allocs;
  for (auto alloc : block.getOps<memref::AllocOp>()) {
    if (!alloc.getType().hasStaticShape() ||
        !alloc.getType().getLayout().isIdentity())
      return alloc.emitError("memory planning needs static allocations with "
                             "the identity layout");
    allocs.push_back(alloc);
  }
  if (allocs.empty())
    return bytes;

  std::vector<memory::Lifetime> lifetimes, communication;
  SmallVector<Operation *> deallocs;
  for (memref::AllocOp alloc : allocs) {
    // A nested arena's buffers were counted when it was planned.
    if (!attrs::nestedArena.has(alloc))
      bytes.unplanned += byteSize(alloc.getType());
    int64_t first = position.lookup(alloc);
    FailureOr<int64_t> last = lastUse(alloc, block, position, deallocs);
    if (failed(last))
      return alloc.emitError("memory planning: a buffer outlives its loop "
                             "iteration");
    lifetimes.push_back({byteSize(alloc.getType()), first, std::max(first, *last)});
    if (attrs::communication.has(alloc))
      communication.push_back(lifetimes.back());
  }
  bytes.communication = peakLive(communication);
  memory::ArenaPlan plan = memory::planArena(lifetimes);
  FailureOr<Value> arena = makeArena(plan.size);
  if (failed(arena))
    return failure();
  for (Operation *dealloc : deallocs)
    dealloc->erase();
  OpBuilder b(block.getParentOp()->getContext());
  for (auto [alloc, offset] : llvm::zip(allocs, plan.offsets)) {
    b.setInsertionPoint(alloc);
    Value at = arith::ConstantIndexOp::create(b, alloc.getLoc(), int64_t(offset));
    Value view = memref::ViewOp::create(b, alloc.getLoc(), alloc.getType(),
                                        *arena, at, ValueRange{});
    alloc.replaceAllUsesWith(view);
    alloc.erase();
  }
  bytes.arena = plan.size;
  return bytes;
}

LogicalResult planStep(func::FuncOp step) {
  OpBuilder b(step.getContext());
  auto topArena = [&](uint64_t size) -> FailureOr<Value> {
    auto arenaType = MemRefType::get({int64_t(size)}, b.getI8Type());
    unsigned index = step.getNumArguments();
    if (failed(step.insertArgument(
            index, arenaType,
            b.getDictionaryAttr(
                attrs::workspace.named(b.getUnitAttr())),
            step.getLoc())))
      return failure();
    return Value(step.getArgument(index));
  };
  FailureOr<PlannedBytes> bytes = planBlock(step.getBody().front(), topArena);
  if (failed(bytes))
    return failure();
  attrs::arenaBytes.set(step, b.getI64IntegerAttr(bytes->arena));
  attrs::unplannedBytes.set(step, b.getI64IntegerAttr(bytes->unplanned));
  attrs::communicationBytes.set(step, b.getI64IntegerAttr(bytes->communication));
  return success();
}

/// A block function's buffers go into a scratch arena that each call
/// passes, as a new last argument: the caller allocates it just before the
/// call, so its planner packs the scratch of every layer's call into one
/// place, live only while the call runs.
LogicalResult planBlockFunction(func::FuncOp function, ModuleOp module) {
  auto scratch = [&](uint64_t size) -> FailureOr<Value> {
    OpBuilder b(function.getContext());
    auto arenaType = MemRefType::get({int64_t(size)}, b.getI8Type());
    unsigned index = function.getNumArguments();
    if (failed(function.insertArgument(
            index, arenaType,
            b.getDictionaryAttr(attrs::workspace.named(b.getUnitAttr())),
            function.getLoc())))
      return failure();
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(function, module);
    if (!uses)
      return function.emitError("internal error: unknown uses of a block");
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (!call)
        return use.getUser()->emitError("internal error: a block used other "
                                        "than by a call");
      b.setInsertionPoint(call);
      Value arena = memref::AllocOp::create(b, call.getLoc(), arenaType);
      call.getOperandsMutable().append(arena);
    }
    return Value(function.getArgument(index));
  };
  return failure(failed(planBlock(function.getBody().front(), scratch)));
}

struct PlanMemory : public impl::PlanMemoryBase<PlanMemory> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Blocks first: their calls' scratch arenas are buffers of the steps.
    for (auto block : module.getOps<func::FuncOp>())
      if (attrs::block.has(block) && !block.isExternal() &&
          failed(planBlockFunction(block, module)))
        return signalPassFailure();
    for (auto step : module.getOps<func::FuncOp>())
      if (attrs::phase.has(step) && !step.isExternal() &&
          failed(planStep(step)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace sinter
