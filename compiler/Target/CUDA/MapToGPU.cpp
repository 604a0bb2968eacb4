//===- MapToGPU.cpp - Loop nests over device memory become kernels --------===//

#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAMAPTOGPU
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

constexpr int64_t kThreadsPerBlock = 256;
/// Threads a column nest that splits its rows aims for: enough to fill a
/// large GPU (132 SMs), few enough that each walks many positions.
constexpr int64_t kRowSplitThreads = 64 * 1024;

/// Whether `op` or an op inside it reads or writes a buffer.
bool touchesMemory(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isa<memref::LoadOp, memref::StoreOp>(inner) ? WalkResult::interrupt()
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
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, Value blocks, Value threads) {
  Value one = index(b, loc, 1);
  auto launch = gpu::LaunchOp::create(b, loc, blocks, one, one, threads, one, one);
  Block &body = launch.getBody().front();
  b.setInsertionPointToEnd(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  return launch;
}

/// Iterations each thread of a large straight-line nest runs. One
/// iteration's loads keep a few bytes in flight per thread, far from what
/// an H100's memory needs to stream; four iterations' loads, issued before
/// any of them is used, keep four times as many in flight.
constexpr int64_t kIterationsPerThread = 4;
/// Nests of fewer iterations keep a thread each: they fill the GPU only
/// with all their threads.
constexpr int64_t kMinIterationsToShare = int64_t(1) << 20;

/// The iteration counts of `loop`'s dimensions, and their product.
std::pair<SmallVector<Value>, Value> iterationCounts(OpBuilder &b, Location loc,
                                                     scf::ParallelOp loop) {
  SmallVector<Value> counts;
  Value total = index(b, loc, 1);
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value count = arith::CeilDivUIOp::create(b, loc, span, step);
    counts.push_back(count);
    total = arith::MulIOp::create(b, loc, total, count);
  }
  return {counts, total};
}

/// The product of `loop`'s iteration counts, when they are constants.
std::optional<int64_t> staticIterations(scf::ParallelOp loop) {
  int64_t total = 1;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return std::nullopt;
    total *= llvm::divideCeil(std::max<int64_t>(*u - *l, 0), *s);
  }
  return total;
}

/// `loop`'s induction variables at flat iteration `flat` (the innermost
/// dimension varies fastest: neighbouring threads touch neighbouring
/// elements).
IRMapping iterationAt(OpBuilder &b, Location loc, scf::ParallelOp loop,
                      ArrayRef<Value> counts, Value flat) {
  IRMapping map;
  Value rest = flat;
  for (int64_t d = int64_t(counts.size()) - 1; d >= 0; --d) {
    Value i = arith::RemUIOp::create(b, loc, rest, counts[d]);
    rest = arith::DivUIOp::create(b, loc, rest, counts[d]);
    Value iv = arith::AddIOp::create(b, loc, loop.getLowerBound()[d],
                                     arith::MulIOp::create(b, loc, i, loop.getStep()[d]));
    map.map(loop.getInductionVars()[d], iv);
  }
  return map;
}

/// Whether `loop`'s body is straight-line code: no loops or branches, so
/// several iterations can run op by op side by side.
bool isStraightLine(scf::ParallelOp loop) {
  return llvm::all_of(loop.getBody()->without_terminator(),
                      [](Operation &op) { return op.getNumRegions() == 0; });
}

/// for (i0, .., in) in parallel: body  ->  a thread per iteration, or, for
/// a large straight-line nest, a thread per kIterationsPerThread
/// iterations a block's width apart (each load still coalesced across the
/// warp). A block whose iterations all exist runs its thread's iterations
/// op by op side by side, so their loads go out together; the iterations
/// of a parallel loop are independent, so that order computes the same.
/// The last block, which may run past the end, checks each iteration.
void launchParallel(scf::ParallelOp loop) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  auto [counts, total] = iterationCounts(b, loc, loop);
  std::optional<int64_t> known = staticIterations(loop);
  int64_t perThread = known && *known >= kMinIterationsToShare && isStraightLine(loop)
                          ? kIterationsPerThread
                          : 1;
  Value threads = index(b, loc, kThreadsPerBlock);
  Value perBlock = index(b, loc, kThreadsPerBlock * perThread);
  // At least one block: a launch of none is an error, and a loop of no
  // iterations runs none anyway (every thread fails the bound check).
  Value blocks = arith::MaxUIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, total, perBlock), index(b, loc, 1));
  gpu::LaunchOp launch = createLaunch(b, loc, blocks, threads);
  Value blockStart = arith::MulIOp::create(b, loc, launch.getBlockIds().x, perBlock);
  SmallVector<Value> flats;
  for (int64_t j = 0; j < perThread; ++j)
    flats.push_back(arith::AddIOp::create(
        b, loc, blockStart,
        arith::AddIOp::create(b, loc, launch.getThreadIds().x,
                              index(b, loc, j * kThreadsPerBlock))));
  auto runGuarded = [&](Value flat) {
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, flat, total);
    auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    IRMapping map = iterationAt(b, loc, loop, counts, flat);
    for (Operation &op : loop.getBody()->without_terminator())
      b.clone(op, map);
  };
  if (perThread == 1) {
    runGuarded(flats[0]);
    loop.erase();
    return;
  }
  Value blockEnd = arith::AddIOp::create(b, loc, blockStart, perBlock);
  Value whole = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, blockEnd, total);
  auto split = scf::IfOp::create(b, loc, whole, /*withElseRegion=*/true);
  b.setInsertionPointToStart(&split.getThenRegion().front());
  SmallVector<IRMapping> maps;
  for (Value flat : flats)
    maps.push_back(iterationAt(b, loc, loop, counts, flat));
  for (Operation &op : loop.getBody()->without_terminator())
    for (IRMapping &map : maps)
      b.clone(op, map);
  b.setInsertionPointToStart(&split.getElseRegion().front());
  for (Value flat : flats)
    runGuarded(flat);
  loop.erase();
}

/// The buffer `v` is a view of, through views that keep its elements
/// (subviews, casts, reshapes); the step's planned buffers (memref.view of
/// the arena) are distinct buffers, so the walk stops there.
Value bufferOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view || isa<memref::ViewOp>(def))
      break;
    v = view.getViewSource();
  }
  return v;
}

/// A sequential nest `for p { reads; for d { ... } }` in which every
/// element the inner loop writes has d at the same index, and nothing it
/// writes is read elsewhere: each d owns its column, so the columns can run
/// on threads of their own, each keeping p's order (a scatter-add of
/// embedding-gradient rows, whose ids may repeat, gives the same sums as on
/// one thread). The inner loop, when the nest is such a one.
scf::ForOp independentColumns(scf::ForOp outer) {
  if (outer.getNumResults() != 0)
    return {};
  scf::ForOp inner;
  for (Operation &op : outer.getBody()->without_terminator()) {
    if (auto loop = dyn_cast<scf::ForOp>(op); loop && !inner) {
      inner = loop;
      continue;
    }
    if (op.getNumRegions() != 0 || !(isa<memref::LoadOp>(op) || isMemoryEffectFree(&op)))
      return {};
  }
  if (!inner || inner.getNumResults() != 0)
    return {};
  for (Value bound : {inner.getLowerBound(), inner.getUpperBound(), inner.getStep()})
    if (!bound.getParentRegion()->isProperAncestor(&outer.getRegion()))
      return {};
  Value column = inner.getInductionVar();
  // Where each written buffer is indexed by the column.
  llvm::DenseMap<Value, unsigned> written;
  for (Operation &op : inner.getBody()->without_terminator()) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      auto at = llvm::find(store.getIndices(), column);
      if (at == store.getIndices().end())
        return {};
      unsigned position = at - store.getIndices().begin();
      auto [it, fresh] = written.try_emplace(store.getMemRef(), position);
      if (!fresh && it->second != position)
        return {};
      continue;
    }
    if (op.getNumRegions() != 0 || !(isa<memref::LoadOp>(op) || isMemoryEffectFree(&op)))
      return {};
  }
  // Every read of a written buffer is of its own column; other buffers the
  // nest reads are not views of a written one.
  llvm::DenseSet<Value> writtenBuffers;
  for (auto &entry : written)
    writtenBuffers.insert(bufferOf(entry.first));
  bool independent = true;
  outer.getBody()->walk([&](memref::LoadOp load) {
    auto it = written.find(load.getMemRef());
    if (it == written.end()) {
      independent &= !writtenBuffers.contains(bufferOf(load.getMemRef()));
      return;
    }
    independent &=
        load->getParentOp() == inner && load.getIndices()[it->second] == column;
  });
  if (written.size() != writtenBuffers.size())
    return {}; // two written views of one buffer
  return independent ? inner : scf::ForOp();
}

/// The row at which a column nest's inner loop reads and writes every
/// buffer it writes, when that is one value computed before the inner loop
/// (an embedding gradient's row: the position's id), and the rows of those
/// buffers. Threads can then split the rows as well as the columns: each
/// element still has one thread, which adds into it in the positions'
/// order. {null, 0} otherwise.
std::pair<Value, int64_t> sharedRow(scf::ForOp inner) {
  Value column = inner.getInductionVar();
  DenseSet<Value> written;
  inner.getBody()->walk(
      [&](memref::StoreOp store) { written.insert(store.getMemRef()); });
  Value row;
  int64_t rows = ShapedType::kDynamic;
  bool shared = true;
  inner.getBody()->walk([&](Operation *op) {
    Value buffer;
    ValueRange indices;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      buffer = load.getMemRef();
      indices = load.getIndices();
    } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
      buffer = store.getMemRef();
      indices = store.getIndices();
    }
    if (!buffer || !written.contains(buffer))
      return;
    if (indices.size() != 2 || !llvm::is_contained(indices, column)) {
      shared = false;
      return;
    }
    unsigned at = indices[0] == column ? 1 : 0;
    Value here = indices[at];
    int64_t extent = cast<MemRefType>(buffer.getType()).getDimSize(at);
    shared &= (!row || row == here) && here != column && !ShapedType::isDynamic(extent) &&
              !inner->isAncestor(here.getParentRegion()->getParentOp());
    row = here;
    rows = ShapedType::isDynamic(rows) ? extent : std::min(rows, extent);
  });
  if (!shared || !row)
    return {Value(), 0};
  return {row, rows};
}

/// Lanes of a warp, which vote together.
constexpr int64_t kWarpSize = 32;

/// The ops of `outer`'s body before `inner` that `value` is computed from.
SmallVector<Operation *> sliceInOuterBody(scf::ForOp outer, Value value) {
  Block *body = outer.getBody();
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> work{value};
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != body || slice.contains(def))
      continue;
    slice.insert(def);
    work.append(def->operand_begin(), def->operand_end());
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// The body of a column nest whose rows are split among groups of blocks:
/// `outer`'s positions in order, each lane of a warp testing one position
/// of a tile of 32 for its group's rows, a ballot gathering the warp's
/// answers, then every lane visiting the tile's matching positions in
/// order (`inside`: the lane has a column). A thread tests a 32nd of the
/// positions it tested one by one, and each element still gets its
/// additions in the positions' order.
void walkMatchingPositions(OpBuilder &b, Location loc, scf::ForOp outer, scf::ForOp inner,
                           Value row, int64_t groups, Value group, Value column,
                           Value inside) {
  Value zero = index(b, loc, 0), warp = index(b, loc, kWarpSize);
  Value span = arith::MaxSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, outer.getUpperBound(), outer.getLowerBound()),
      zero);
  Value trips = arith::CeilDivUIOp::create(b, loc, span, outer.getStep());
  auto positionOf = [&](OpBuilder &at, Value k) -> Value {
    return arith::AddIOp::create(at, loc, outer.getLowerBound(),
                                 arith::MulIOp::create(at, loc, k, outer.getStep()));
  };
  Value lane = gpu::LaneIdOp::create(b, loc, /*upper_bound=*/nullptr);
  auto tiles = scf::ForOp::create(b, loc, zero, trips, warp);
  OpBuilder t = OpBuilder::atBlockBegin(tiles.getBody());
  Value first = tiles.getInductionVar();
  // This lane's position of the tile, and whether its row is the group's.
  Value k = arith::AddIOp::create(t, loc, first, lane);
  Value exists = arith::CmpIOp::create(t, loc, arith::CmpIPredicate::ult, k, trips);
  IRMapping test;
  test.map(outer.getInductionVar(),
           positionOf(t, arith::SelectOp::create(t, loc, exists, k, zero)));
  for (Operation *op : sliceInOuterBody(outer, row))
    t.clone(*op, test);
  Value groupOfRow =
      arith::RemUIOp::create(t, loc, test.lookupOrDefault(row), index(t, loc, groups));
  Value mine = arith::AndIOp::create(
      t, loc, exists,
      arith::CmpIOp::create(t, loc, arith::CmpIPredicate::eq, groupOfRow, group));
  Value everyLane = arith::ConstantIntOp::create(t, loc, t.getI32Type(), -1);
  Value votes = NVVM::VoteSyncOp::create(t, loc, t.getI32Type(), everyLane, mine,
                                         NVVM::VoteSyncKind::ballot);
  // The tile's matching positions, lowest lane first.
  scf::WhileOp::create(
      t, loc, TypeRange{t.getI32Type()}, ValueRange{votes},
      [&](OpBuilder &w, Location l, ValueRange left) {
        Value none = arith::ConstantIntOp::create(w, l, w.getI32Type(), 0);
        Value any = arith::CmpIOp::create(w, l, arith::CmpIPredicate::ne, left[0], none);
        scf::ConditionOp::create(w, l, any, left);
      },
      [&](OpBuilder &w, Location l, ValueRange left) {
        Value bit = LLVM::CountTrailingZerosOp::create(w, l, w.getI32Type(), left[0],
                                                       /*is_zero_poison=*/true);
        Value rest = arith::AndIOp::create(
            w, l, left[0],
            arith::SubIOp::create(
                w, l, left[0], arith::ConstantIntOp::create(w, l, w.getI32Type(), 1)));
        auto ours = scf::IfOp::create(w, l, inside, /*withElseRegion=*/false);
        OpBuilder in = OpBuilder::atBlockBegin(&ours.getThenRegion().front());
        Value at = arith::AddIOp::create(
            in, l, first, arith::IndexCastUIOp::create(in, l, in.getIndexType(), bit));
        IRMapping map;
        map.map(outer.getInductionVar(), positionOf(in, at));
        map.map(inner.getInductionVar(), column);
        for (Operation &op : outer.getBody()->without_terminator())
          if (&op != inner.getOperation())
            in.clone(op, map);
        for (Operation &op : inner.getBody()->without_terminator())
          in.clone(op, map);
        scf::YieldOp::create(w, l, rest);
      });
}

/// Runs `outer` with a thread per iteration of `inner` (see
/// independentColumns): each thread walks the outer loop, in order, over
/// its own column. When the inner loop writes at one row (sharedRow), the
/// rows are split among groups of blocks too: a thread then adds only into
/// the rows of its group, found a warp at a time (walkMatchingPositions),
/// so a few hundred columns still fill the GPU.
void launchColumns(scf::ForOp outer, scf::ForOp inner) {
  OpBuilder b(outer);
  Location loc = outer.getLoc();
  Value span =
      arith::SubIOp::create(b, loc, inner.getUpperBound(), inner.getLowerBound());
  Value count = arith::CeilDivUIOp::create(b, loc, span, inner.getStep());
  Value threads = index(b, loc, kThreadsPerBlock);
  Value columnBlocks = arith::MaxUIOp::create(
      b, loc, arith::CeilDivUIOp::create(b, loc, count, threads), index(b, loc, 1));
  auto [row, rows] = sharedRow(inner);
  std::optional<int64_t> lb = getConstantIntValue(inner.getLowerBound()),
                         ub = getConstantIntValue(inner.getUpperBound()),
                         step = getConstantIntValue(inner.getStep());
  int64_t groups = 1;
  if (row && rows > 1 && lb && ub && step && *step > 0 &&
      row.getParentBlock() == outer.getBody() && outer.getInductionVar().getType().isIndex()) {
    int64_t columns = std::max<int64_t>(llvm::divideCeil(*ub - *lb, *step), 1);
    int64_t columnThreads =
        llvm::divideCeil(columns, kThreadsPerBlock) * kThreadsPerBlock;
    groups = std::clamp<int64_t>(kRowSplitThreads / columnThreads, 1, rows);
  }
  Value blocks = arith::MulIOp::create(b, loc, columnBlocks, index(b, loc, groups));
  gpu::LaunchOp launch = createLaunch(b, loc, blocks, threads);
  Value block = launch.getBlockIds().x;
  Value group = arith::DivUIOp::create(b, loc, block, columnBlocks);
  Value columnBlock = arith::RemUIOp::create(b, loc, block, columnBlocks);
  Value flat =
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, columnBlock, threads),
                            launch.getThreadIds().x);
  Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, flat, count);
  Value column =
      arith::AddIOp::create(b, loc, inner.getLowerBound(),
                            arith::MulIOp::create(b, loc, flat, inner.getStep()));
  if (groups > 1) {
    // Every lane votes, with a column or not.
    walkMatchingPositions(b, loc, outer, inner, row, groups, group, column, inside);
    outer.erase();
    return;
  }
  auto guard = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/false);
  outer->moveBefore(guard.getThenRegion().front().getTerminator());
  // The inner loop's body takes its place, at this thread's column.
  OpBuilder here(inner);
  IRMapping map;
  map.map(inner.getInductionVar(), column);
  for (Operation &op : inner.getBody()->without_terminator())
    here.clone(op, map);
  inner.erase();
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

/// Whether anything between `from` and `to` (in one block) may write
/// memory: a kernel, a call, a store, a loop.
bool mayWriteBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode()) {
    if (op->getNumRegions() != 0 || isa<func::CallOp, memref::StoreOp>(op))
      return true;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects ? !isMemoryEffectFree(op) : effects.hasEffect<MemoryEffects::Write>())
      return true;
  }
  return false;
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
                  llvm::all_of(def->getResultTypes(),
                               [](Type t) { return t.isIntOrIndexOrFloat(); });
    if (!scalar || !(isa<memref::LoadOp>(def) || isMemoryEffectFree(def)))
      continue;
    // A load read again in the kernel must see what it saw on the host.
    if (isa<memref::LoadOp>(def) && mayWriteBetween(def, store))
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
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      storeWithItsScalars(store);
      continue;
    }
    if (!loopOrBranch || !touchesMemory(&op))
      continue;
    auto loop = dyn_cast<scf::ForOp>(op);
    if (scf::ForOp inner = loop ? independentColumns(loop) : scf::ForOp())
      launchColumns(loop, inner);
    else
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
