//===- ReductionConsumers.cpp - Loops that run in a reduction's launch ----===//

#include "compiler/Target/CUDA/ReductionConsumers.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <functional>

using namespace mlir;

namespace sinter::cuda {

/// At most this many ops between a reduction and a loop that joins it.
constexpr int kLookPast = 8;

SmallVector<LoopPlace> reductionPlaces(unsigned loops, unsigned parallel) {
  SmallVector<LoopPlace> places;
  for (unsigned d = 0; d < loops; ++d)
    places.push_back(d < parallel ? LoopPlace{LoopPlace::Parallel, d}
                                  : LoopPlace{LoopPlace::Reduced, d - parallel});
  return places;
}

std::optional<SmallVector<int64_t>> rowIndex(AffineMap map, ArrayRef<LoopPlace> loops) {
  SmallVector<int64_t> at;
  for (AffineExpr e : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      LoopPlace place = loops[dim.getPosition()];
      if (place.kind == LoopPlace::Reduced)
        return std::nullopt;
      at.push_back(place.kind == LoopPlace::Parallel ? place.loop : -1);
    } else if (auto c = dyn_cast<AffineConstantExpr>(e); c && c.getValue() == 0) {
      at.push_back(-1);
    } else {
      return std::nullopt;
    }
  }
  return at;
}

std::optional<SmallVector<Operation *>> definitionsAfter(Operation *op,
                                                         Operation *anchor) {
  llvm::SetVector<Operation *> moved;
  std::function<bool(Value)> available = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != anchor->getBlock() || !anchor->isBeforeInBlock(def) ||
        moved.contains(def))
      return true;
    if (!isMemoryEffectFree(def) || def->getNumRegions() != 0 ||
        !llvm::all_of(def->getOperands(), available))
      return false;
    moved.insert(def);
    return true;
  };
  bool ok = true;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (!op->isAncestor(v.getParentBlock()->getParentOp())) // from outside `op`
        ok &= available(v);
  });
  if (!ok)
    return std::nullopt;
  SmallVector<Operation *> ordered(moved.begin(), moved.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

namespace {

/// Where `op`'s loops run in a reduction with loop ranges `ranges`, the
/// first `parallel` of them parallel: its loops, unit ones aside, are the
/// parallel ones in order (once per row), or are all the reduction's loops
/// (once per element). Nothing otherwise.
std::optional<SmallVector<LoopPlace>>
placesOf(linalg::GenericOp op, ArrayRef<int64_t> ranges, unsigned parallel) {
  SmallVector<int64_t> own = op.getStaticLoopRanges();
  if (ArrayRef<int64_t>(own) == ranges)
    return reductionPlaces(ranges.size(), parallel); // the same loops: one per element
  SmallVector<LoopPlace> places;
  unsigned next = 0;
  for (int64_t range : own) {
    if (range == 1) {
      places.push_back({LoopPlace::Unit, 0});
      continue;
    }
    if (next == parallel || ranges[next] != range)
      return std::nullopt;
    places.push_back({LoopPlace::Parallel, next++});
  }
  if (next != parallel)
    return std::nullopt;
  return places;
}

/// What a candidate consumer asks of the reduction's launch.
struct Candidate {
  ReductionConsumer consumer;
  /// What it reads and writes in memory there: the per-row values the
  /// block holds, and the stored outputs each thread reads where it wrote
  /// them, left out.
  Accesses own;
};

/// `op` as a consumer of a reduction whose loops have `ranges` (the first
/// `parallel` parallel), holding per-row values `slots` and storing
/// `stored` (each at its map `storedMaps`), when it can be one.
std::optional<Candidate> candidate(linalg::GenericOp op, Operation *reduction,
                                   ArrayRef<int64_t> ranges, unsigned parallel,
                                   ArrayRef<RowSlot> slots,
                                   ArrayRef<std::pair<Value, AffineMap>> stored) {
  if (!op || op.getNumLoops() != op.getNumParallelLoops() || !op.hasPureBufferSemantics())
    return std::nullopt;
  std::optional<SmallVector<LoopPlace>> places = placesOf(op, ranges, parallel);
  std::optional<Accesses> own = accessesOf(op);
  std::optional<SmallVector<Operation *>> hoisted = definitionsAfter(op, reduction);
  if (!places || !own || !hoisted)
    return std::nullopt;
  bool perElement = ArrayRef<int64_t>(op.getStaticLoopRanges()) == ranges &&
                    !ranges.drop_front(parallel).empty();
  // Its body's ops run where its loops did: one with regions could hold a
  // loop index the launch would not map.
  for (Operation &inner : op.getRegion().front())
    if (inner.getNumRegions() != 0)
      return std::nullopt;
  bool readsTheBlock = false;
  // What its body loads stays read from memory; of its operands, only those
  // the block hands over leave the reads.
  own->reads.clear();
  op.getRegion().walk([&](memref::LoadOp load) { own->reads.insert(load.getMemRef()); });
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (type && !type.hasStaticShape())
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    std::optional<SmallVector<int64_t>> row = rowIndex(map, *places);
    if (op.isDpsInput(&operand)) {
      if (row && llvm::is_contained(slots, RowSlot{operand.get(), *row})) {
        readsTheBlock = true;
        continue;
      }
      // A stored output, read where the same thread stored it.
      if (perElement && llvm::is_contained(stored, std::make_pair(operand.get(), map))) {
        readsTheBlock = true;
        continue;
      }
      if (type)
        own->reads.insert(operand.get());
      continue;
    }
    if (!op.getMatchingBlockArgument(&operand).use_empty())
      own->reads.insert(operand.get());
    // Each row's own elements: one per row, or each element once.
    if (perElement
            ? !map.isPermutation()
            : !row || llvm::any_of(llvm::seq<int64_t>(0, parallel), [&](int64_t p) {
                return !llvm::is_contained(*row, p);
              }))
      return std::nullopt;
  }
  if (!readsTheBlock)
    return std::nullopt;
  return Candidate{{op, *places, *hoisted}, *own};
}

/// The accesses of `c`, a per-element consumer, that may meet the
/// reduction's: its writes into a buffer the reduction only reads, as one
/// input through the same view and indexing map (a permutation), left out,
/// when nothing else of either touches those bytes (no other input, load
/// or output of the reduction; the consumer reads them only where it
/// writes them). Each thread then writes there the elements it read when it
/// folded them, after its block's totals (cross-entropy's gradient written
/// over the logits).
Accesses inPlaceLeftOut(const Candidate &c, linalg::GenericOp reduction,
                        const Accesses &reductionAccesses, BufferOverlaps &overlaps) {
  Accesses rest = c.own;
  if (!c.consumer.perElement())
    return rest;
  linalg::GenericOp op = c.consumer.op;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Value buffer = init.get();
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (!map.isPermutation())
      continue;
    auto meets = [&](Value v) { return !overlaps.disjoint(v, buffer); };
    bool readThere = false, otherwise = false;
    for (OpOperand *in : reduction.getDpsInputOperands())
      if (meets(in->get()))
        (in->get() == buffer && reduction.getMatchingIndexingMap(in) == map ? readThere
                                                                             : otherwise) = true;
    otherwise |= llvm::any_of(reductionAccesses.writes, meets);
    for (OpOperand &other : op->getOpOperands())
      if (&other != &init && meets(other.get()))
        otherwise |= !op.isDpsInput(&other) || other.get() != buffer ||
                     op.getMatchingIndexingMap(&other) != map;
    for (linalg::GenericOp loop : {reduction, op})
      loop.getRegion().walk([&](memref::LoadOp load) { otherwise |= meets(load.getMemRef()); });
    if (readThere && !otherwise)
      rest.writes.remove(buffer);
  }
  return rest;
}

} // namespace

SmallVector<ReductionConsumer> consumersOf(linalg::GenericOp reduction,
                                           ArrayRef<OpOperand *> folded,
                                           ArrayRef<OpOperand *> stored,
                                           BufferOverlaps &overlaps) {
  SmallVector<ReductionConsumer> consumers;
  std::optional<Accesses> reductionAccesses = accessesOf(reduction);
  if (!reductionAccesses)
    return consumers;
  SmallVector<int64_t> ranges = reduction.getStaticLoopRanges();
  unsigned parallel = reduction.getNumParallelLoops();
  SmallVector<LoopPlace> places = reductionPlaces(ranges.size(), parallel);
  SmallVector<RowSlot> slots;
  for (OpOperand *init : folded)
    if (std::optional<SmallVector<int64_t>> at =
            rowIndex(reduction.getMatchingIndexingMap(init), places))
      slots.push_back({init->get(), *at});
  SmallVector<std::pair<Value, AffineMap>> storedAt;
  for (OpOperand *init : stored)
    storedAt.push_back({init->get(), reduction.getMatchingIndexingMap(init)});
  SmallVector<Accesses> passed, taken;
  int lookedPast = 0;
  for (Operation *next = reduction->getNextNode(); next && lookedPast <= kLookPast;
       next = next->getNextNode()) {
    if (isMemoryEffectFree(next) ||
        isa<memref::ViewOp, memref::AllocOp, memref::AllocaOp>(next))
      continue;
    std::optional<Accesses> all = accessesOf(next);
    if (!all)
      break;
    std::optional<Candidate> c = candidate(dyn_cast<linalg::GenericOp>(next), reduction,
                                           ranges, parallel, slots, storedAt);
    bool fits =
        c && overlaps.independent(*reductionAccesses,
                                  inPlaceLeftOut(*c, reduction, *reductionAccesses, overlaps)) &&
        llvm::all_of(passed,
                     [&](const Accesses &p) { return overlaps.independent(p, *all); }) &&
        llvm::all_of(taken,
                     [&](const Accesses &t) { return overlaps.independent(t, c->own); });
    if (!fits) {
      passed.push_back(*all);
      ++lookedPast;
      continue;
    }
    taken.push_back(c->own);
    // What a loop run once per row writes, later loops read from the block.
    if (!c->consumer.perElement())
      for (OpOperand &init : c->consumer.op.getDpsInitsMutable())
        slots.push_back(
            {init.get(),
             *rowIndex(c->consumer.op.getMatchingIndexingMap(&init), c->consumer.loops)});
    consumers.push_back(std::move(c->consumer));
  }
  return consumers;
}

} // namespace sinter::cuda
