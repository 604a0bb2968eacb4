//===- LaunchesOnHost.cpp - Kernels as host loops, for tests on a CPU ------===//
//
// The generated kernels decide which thread computes which element; a
// mistake there (an element no thread writes, or two threads write) is
// visible only when the kernel runs. Without a GPU a kernel can still run:
// one thread after another, as loops on the CPU. A block-wide reduction
// (`gpu.all_reduce` in the launch's body, as sinter-cuda-block-reductions
// makes) splits the body in phases: every thread runs one phase, keeping
// the values later phases read in an array with an element per thread, and
// the reduction combines the array before the next phase starts. Tests
// lower the result as any host code and compare what it computed.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <limits>

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDALAUNCHESONHOST
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

/// A launch's body cut at its block-wide reductions and barriers: phase i
/// runs before cut i (a reduction, or null for a barrier), the last phase
/// after them all.
struct Phases {
  SmallVector<SmallVector<Operation *>> ops;
  SmallVector<gpu::AllReduceOp> reductions;
};

/// Whether the host can combine `reduce`: a kind it knows, on a float or
/// integer scalar, with no body of its own.
bool combinable(gpu::AllReduceOp reduce) {
  if (!reduce.getBody().empty() || !reduce.getOp())
    return false;
  Type t = reduce.getType();
  switch (*reduce.getOp()) {
  case gpu::AllReduceOperation::ADD:
  case gpu::AllReduceOperation::MUL:
    return t.isIntOrFloat();
  case gpu::AllReduceOperation::MAXNUMF:
  case gpu::AllReduceOperation::MINNUMF:
  case gpu::AllReduceOperation::MAXIMUMF:
  case gpu::AllReduceOperation::MINIMUMF:
    return isa<FloatType>(t);
  default:
    return false;
  }
}

/// `launch`'s phases, when its threads meet only in combinable block-wide
/// reductions at the top of its body, and then only in blocks laid out
/// along x; nothing otherwise.
std::optional<Phases> phasesOf(gpu::LaunchOp launch) {
  if (!launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty() || launch.hasClusterSize() ||
      launch.getAsyncToken() || launch.getDynamicSharedMemorySize() ||
      !launch.getBody().hasOneBlock())
    return std::nullopt;
  Block &body = launch.getBody().front();
  bool meets = false;
  launch.getBody().walk([&](Operation *op) {
    if (isa<gpu::ShuffleOp, gpu::SubgroupReduceOp>(op))
      meets = true;
    if (isa<gpu::BarrierOp>(op))
      meets |= op->getBlock() != &body;
    // A reduction of a value the body computes, at its top level.
    if (auto reduce = dyn_cast<gpu::AllReduceOp>(op)) {
      Operation *def = reduce.getValue().getDefiningOp();
      meets |= reduce->getBlock() != &body || !combinable(reduce) || !def ||
               def->getBlock() != &body;
    }
  });
  if (meets)
    return std::nullopt;
  Phases phases;
  phases.ops.emplace_back();
  for (Operation &op : body.without_terminator()) {
    if (isa<gpu::AllReduceOp, gpu::BarrierOp>(op)) {
      phases.reductions.push_back(dyn_cast<gpu::AllReduceOp>(op));
      phases.ops.emplace_back();
      continue;
    }
    phases.ops.back().push_back(&op);
  }
  gpu::KernelDim3 threads = launch.getBlockSizeOperandValues();
  if (!phases.reductions.empty() &&
      (getConstantIntValue(threads.y) != 1 || getConstantIntValue(threads.z) != 1))
    return std::nullopt;
  return phases;
}

/// `a` combined with `b` as `kind` does.
Value combine(OpBuilder &b, Location loc, gpu::AllReduceOperation kind, Value x,
              Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case gpu::AllReduceOperation::ADD:
    return isFloat ? arith::AddFOp::create(b, loc, x, y).getResult()
                   : arith::AddIOp::create(b, loc, x, y).getResult();
  case gpu::AllReduceOperation::MUL:
    return isFloat ? arith::MulFOp::create(b, loc, x, y).getResult()
                   : arith::MulIOp::create(b, loc, x, y).getResult();
  case gpu::AllReduceOperation::MAXNUMF:
    return arith::MaxNumFOp::create(b, loc, x, y);
  case gpu::AllReduceOperation::MINNUMF:
    return arith::MinNumFOp::create(b, loc, x, y);
  case gpu::AllReduceOperation::MAXIMUMF:
    return arith::MaximumFOp::create(b, loc, x, y);
  case gpu::AllReduceOperation::MINIMUMF:
    return arith::MinimumFOp::create(b, loc, x, y);
  default:
    llvm_unreachable("combinable() admits no other kind");
  }
}

/// `launch` as loops over its blocks, and in each, loops over its threads
/// (z, y, x, so x varies fastest) for each phase, the reductions between.
void runOnHost(gpu::LaunchOp launch, const Phases &phases) {
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();

  // The phase of each op of the body, reductions counted with the phase
  // they end; the values a later phase reads get an element per thread.
  DenseMap<Operation *, unsigned> phaseOf;
  for (auto [i, ops] : llvm::enumerate(phases.ops))
    for (Operation *op : ops)
      phaseOf[op] = i;
  for (auto [i, reduce] : llvm::enumerate(phases.reductions))
    if (reduce)
      phaseOf[reduce] = i;
  Block &body = launch.getBody().front();
  llvm::MapVector<Value, Value> perThread;
  for (auto [i, ops] : llvm::enumerate(phases.ops))
    for (Operation *op : ops)
      for (Value v : op->getResults())
        for (Operation *user : v.getUsers()) {
          Operation *top = body.findAncestorOpInBlock(*user);
          if (top && phaseOf.lookup(top) > i && !perThread.count(v))
            perThread[v] = memref::AllocOp::create(
                b, loc, MemRefType::get({ShapedType::kDynamic}, v.getType()),
                ValueRange{block.x});
        }
  // A reduction's operand is read by the host's combination.
  for (gpu::AllReduceOp reduce : phases.reductions)
    if (reduce && !perThread.count(reduce.getValue()))
      perThread[reduce.getValue()] = memref::AllocOp::create(
          b, loc, MemRefType::get({ShapedType::kDynamic}, reduce.getType()),
          ValueRange{block.x});

  IRMapping blockMap;
  Operation *outermost = nullptr;
  auto loopOver = [&](IRMapping &map, Value extent, Value id, Value size) {
    auto loop = scf::ForOp::create(b, loc, zero, extent, one);
    outermost = outermost ? outermost : loop.getOperation();
    b.setInsertionPointToStart(loop.getBody());
    map.map(id, loop.getInductionVar());
    map.map(size, extent);
  };
  loopOver(blockMap, grid.z, launch.getBlockIds().z, launch.getGridSize().z);
  loopOver(blockMap, grid.y, launch.getBlockIds().y, launch.getGridSize().y);
  loopOver(blockMap, grid.x, launch.getBlockIds().x, launch.getGridSize().x);
  blockMap.map(launch.getBlockSize().x, block.x);
  blockMap.map(launch.getBlockSize().y, block.y);
  blockMap.map(launch.getBlockSize().z, block.z);
  for (auto [i, ops] : llvm::enumerate(phases.ops)) {
    OpBuilder::InsertionGuard phase(b);
    IRMapping map = blockMap;
    Operation *threadsOuter = nullptr;
    auto threadLoop = [&](Value extent, Value id) {
      auto loop = scf::ForOp::create(b, loc, zero, extent, one);
      threadsOuter = threadsOuter ? threadsOuter : loop.getOperation();
      b.setInsertionPointToStart(loop.getBody());
      map.map(id, loop.getInductionVar());
    };
    threadLoop(block.z, launch.getThreadIds().z);
    threadLoop(block.y, launch.getThreadIds().y);
    threadLoop(block.x, launch.getThreadIds().x);
    Value tid = map.lookup(launch.getThreadIds().x);
    // Earlier phases' values, as this thread kept them.
    for (auto [v, kept] : perThread)
      if (Operation *def = v.getDefiningOp(); def && phaseOf.lookup(def) < i)
        map.map(v, memref::LoadOp::create(b, loc, kept, ValueRange{tid}));
    for (Operation *op : ops)
      b.clone(*op, map);
    for (auto [v, kept] : perThread)
      if (Operation *def = v.getDefiningOp(); def && phaseOf.lookup(def) == i)
        memref::StoreOp::create(b, loc, map.lookupOrDefault(v), kept, ValueRange{tid});
    if (i == phases.reductions.size() || !phases.reductions[i])
      continue; // the end, or a barrier: the next phase starts after every thread
    // The block's reduction, in thread order, for the phases after it.
    b.setInsertionPointAfter(threadsOuter);
    gpu::AllReduceOp reduce = phases.reductions[i];
    Value kept = perThread.lookup(reduce.getValue());
    Value first = memref::LoadOp::create(b, loc, kept, ValueRange{zero});
    auto fold = scf::ForOp::create(b, loc, one, block.x, one, ValueRange{first});
    {
      OpBuilder::InsertionGuard inside(b);
      b.setInsertionPointToStart(fold.getBody());
      Value next =
          memref::LoadOp::create(b, loc, kept, ValueRange{fold.getInductionVar()});
      scf::YieldOp::create(
          b, loc, combine(b, loc, *reduce.getOp(), fold.getRegionIterArgs()[0], next));
    }
    blockMap.map(reduce.getResult(), fold.getResult(0));
  }
  b.setInsertionPointAfter(outermost);
  for (auto [v, kept] : perThread)
    memref::DeallocOp::create(b, loc, kept);
  launch.erase();
}

/// Lanes of a warp.
constexpr int64_t kWarpSize = 32;

/// The buffer a view is of.
Value rootOf(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewLikeOpInterface>())
    buffer = view.getViewSource();
  return buffer;
}

/// The bytes of a buffer a view may reach: [begin, end) of `root`, or all
/// of it where a shift is not a constant.
struct Span {
  Value root;
  int64_t begin = 0, end = std::numeric_limits<int64_t>::max();
  bool overlaps(const Span &other) const {
    return root == other.root && begin < other.end && other.begin < end;
  }
};

/// The span of `buffer`: a typed view of a planned arena (memref.view at a
/// constant byte shift, static shape) reaches its own bytes only, however
/// it is reshaped or cut below (views that stay inside their source); the
/// views above it add their shifts. So a step's buffers, all views of one
/// arena, are told apart. Anything else reaches all of its root.
Span spanOf(Value buffer) {
  Span span;
  bool sized = false;
  while (auto view = buffer.getDefiningOp<ViewLikeOpInterface>()) {
    auto typed = dyn_cast<memref::ViewOp>(view.getOperation());
    std::optional<int64_t> shift =
        typed ? getConstantIntValue(typed.getByteShift()) : std::nullopt;
    if (!sized && typed && shift) {
      MemRefType type = typed.getType();
      Type element = type.getElementType();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          !element.isIntOrFloat())
        return {rootOf(buffer)};
      // As the plan and the LLVM lowering store them: whole bytes (i1 too).
      span.begin = *shift;
      span.end = *shift + type.getNumElements() *
                              int64_t(llvm::divideCeil(element.getIntOrFloatBitWidth(), 8));
      sized = true;
    } else if (sized && typed && shift) {
      span.begin += *shift;
      span.end += *shift;
    } else if (sized || !isa<memref::SubViewOp, memref::CastOp, memref::ExpandShapeOp,
                             memref::CollapseShapeOp>(view.getOperation())) {
      return {rootOf(buffer)};
    }
    buffer = view.getViewSource();
  }
  if (!sized)
    return {buffer};
  span.root = buffer;
  return span;
}

/// Whether `v`, computed in `launch`, may differ between the threads of a
/// warp: it comes from a thread index, a value a loop carries, or the index
/// of a loop whose bounds do.
bool variesInWarp(gpu::LaunchOp launch, Value v, DenseMap<Value, bool> &memo) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  memo[v] = true; // a cycle (none in SSA) counts as varying
  bool varies = false;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    Operation *owner = arg.getOwner()->getParentOp();
    gpu::KernelDim3 tids = launch.getThreadIds();
    if (owner == launch.getOperation())
      varies = arg == tids.x || arg == tids.y || arg == tids.z;
    else if (launch->isProperAncestor(owner)) {
      auto loop = dyn_cast<scf::ForOp>(owner);
      varies = !loop || arg != loop.getInductionVar() ||
               llvm::any_of(ValueRange{loop.getLowerBound(), loop.getUpperBound(),
                                       loop.getStep()},
                            [&](Value bound) { return variesInWarp(launch, bound, memo); });
    }
  } else if (Operation *def = v.getDefiningOp(); def && launch->isProperAncestor(def)) {
    varies = isa<gpu::ThreadIdOp, gpu::GlobalIdOp, gpu::LaneIdOp>(def) ||
             llvm::any_of(def->getOperands(),
                          [&](Value operand) { return variesInWarp(launch, operand, memo); });
  }
  memo[v] = varies;
  return varies;
}

/// The ops of `launch`'s body that `value` is computed from, in order,
/// when they are loads of buffers the launch never writes and pure ops,
/// and the thread enters them only through its index along x (`tid`):
/// no other thread index, no value a loop carries, no loop index whose
/// bounds vary in the warp.
std::optional<SmallVector<Operation *>> pureSlice(gpu::LaunchOp launch, Value value,
                                                  ArrayRef<Span> written) {
  llvm::SetVector<Operation *> slice;
  DenseMap<Value, bool> varies;
  SmallVector<Value> work{value};
  Value tid = launch.getThreadIds().x;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg != tid && variesInWarp(launch, arg, varies))
        return std::nullopt;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!launch->isProperAncestor(def) || slice.contains(def))
      continue;
    auto load = dyn_cast<memref::LoadOp>(def);
    auto overlapsWritten = [&](memref::LoadOp l) {
      Span read = spanOf(l.getMemRef());
      return llvm::any_of(written, [&](const Span &w) { return w.overlaps(read); });
    };
    if ((load && overlapsWritten(load)) ||
        (!load && (!isMemoryEffectFree(def) || def->getNumRegions() != 0)) ||
        isa<gpu::ThreadIdOp, gpu::GlobalIdOp, gpu::LaneIdOp>(def))
      return std::nullopt;
    slice.insert(def);
    work.append(def->operand_begin(), def->operand_end());
  }
  // The body's order (a value is made before what reads it).
  SmallVector<Operation *> ordered;
  launch.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (slice.contains(op))
      ordered.push_back(op);
  });
  return ordered;
}

/// A warp's ballot (`nvvm.vote.sync ballot` over every lane) computed by
/// each thread alone: its warp's 32 predicates, each from the lane's own
/// thread index, when they depend on the thread only through that index.
/// Lanes read `gpu.lane_id` as the thread index's remainder by 32 (blocks
/// of whole warps along x only). False when a launch's votes cannot be
/// computed so (its lane ids may have been spelled so already).
bool emulateWarpVotes(gpu::LaunchOp launch) {
  SmallVector<NVVM::VoteSyncOp> votes;
  SmallVector<gpu::LaneIdOp> lanes;
  SmallVector<Span> written;
  bool otherWrites = false;
  launch.getBody().walk([&](Operation *op) {
    if (auto vote = dyn_cast<NVVM::VoteSyncOp>(op))
      votes.push_back(vote);
    else if (auto lane = dyn_cast<gpu::LaneIdOp>(op))
      lanes.push_back(lane);
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      written.push_back(spanOf(store.getMemRef()));
    else if (!isa<memref::LoadOp>(op) && !isMemoryEffectFree(op) &&
             !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      otherWrites = true;
  });
  if (votes.empty() && lanes.empty())
    return true;
  gpu::KernelDim3 threads = launch.getBlockSizeOperandValues();
  std::optional<int64_t> width = getConstantIntValue(threads.x);
  if (otherWrites || !width || *width % kWarpSize != 0 ||
      getConstantIntValue(threads.y) != 1 || getConstantIntValue(threads.z) != 1 ||
      llvm::any_of(votes, [](NVVM::VoteSyncOp vote) {
        return vote.getKind() != NVVM::VoteSyncKind::ballot ||
               getConstantIntValue(vote.getMask()) != -1;
      }))
    return false;
  Value tid = launch.getThreadIds().x;
  for (gpu::LaneIdOp lane : lanes) {
    OpBuilder b(lane);
    Value warp = arith::ConstantIndexOp::create(b, lane.getLoc(), kWarpSize);
    lane.replaceAllUsesWith(arith::RemUIOp::create(b, lane.getLoc(), tid, warp).getResult());
    lane.erase();
  }
  SmallVector<SmallVector<Operation *>> slices;
  for (NVVM::VoteSyncOp vote : votes) {
    std::optional<SmallVector<Operation *>> slice =
        pureSlice(launch, vote.getPred(), written);
    if (!slice)
      return false;
    slices.push_back(std::move(*slice));
  }
  for (auto [vote, slice] : llvm::zip_equal(votes, slices)) {
    OpBuilder b(vote);
    Location loc = vote.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value warp = arith::ConstantIndexOp::create(b, loc, kWarpSize);
    Value base = arith::SubIOp::create(b, loc, tid, arith::RemUIOp::create(b, loc, tid, warp));
    Value none = arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0);
    auto lanesLoop = scf::ForOp::create(b, loc, zero, warp, one, ValueRange{none});
    OpBuilder in = OpBuilder::atBlockBegin(lanesLoop.getBody());
    Value lane = lanesLoop.getInductionVar();
    IRMapping map;
    map.map(tid, arith::AddIOp::create(in, loc, base, lane).getResult());
    for (Operation *op : slice)
      in.clone(*op, map);
    Value bit = arith::ExtUIOp::create(in, loc, in.getI32Type(),
                                       map.lookupOrDefault(vote.getPred()));
    Value shift = arith::IndexCastUIOp::create(in, loc, in.getI32Type(), lane);
    Value placed = arith::ShLIOp::create(in, loc, bit, shift);
    scf::YieldOp::create(
        in, loc,
        arith::OrIOp::create(in, loc, lanesLoop.getRegionIterArgs()[0], placed).getResult());
    vote.getResult().replaceAllUsesWith(lanesLoop.getResult(0));
    vote.erase();
  }
  return true;
}

struct CUDALaunchesOnHost : public impl::CUDALaunchesOnHostBase<CUDALaunchesOnHost> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<std::pair<gpu::LaunchOp, Phases>> launches;
    bool missed = false;
    getOperation().walk([&](gpu::LaunchOp launch) {
      std::optional<Phases> phases;
      if (emulateWarpVotes(launch))
        phases = phasesOf(launch);
      if (phases)
        launches.push_back({launch, std::move(*phases)});
      else if (all) {
        launch.emitError("this kernel's threads meet in a way the host cannot "
                         "run in order (barriers, shuffles or shared memory)");
        missed = true;
      }
    });
    if (missed)
      return signalPassFailure();
    for (auto &[launch, phases] : launches)
      runOnHost(launch, phases);
  }
};

} // namespace
} // namespace sinter::cuda
