//===- BlockReductions.cpp - A block of threads for each reduced row -------===//
//
// A linalg reduction that maps to one thread per output element reads its
// row alone, one element after another, and neighbouring threads read
// elements a row apart: cross-entropy over GPT-2's 50,257 logits keeps
// 16K threads busy for 50K steps each. Here such a reduction becomes a
// launch of one block per output element: the block's threads stride over
// the reduced elements together (neighbours read neighbours), each folds
// its share into a partial from the combiner's identity, and
// `gpu.all_reduce` combines the partials; thread 0 folds the result into
// the output as linalg does. The order of the sum changes, the kind of
// accumulator (f64 sums) does not. An output the reduction stores rather
// than folds (a fused producer's values, sinter-cuda-fuse-into-row-reductions)
// is written by the thread that computes each element, in the same pass.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/BufferAccesses.h"
#include "compiler/Target/CUDA/Passes.h"
#include "compiler/Target/CUDA/ReductionConsumers.h"
#include "compiler/Target/CUDA/Reductions.h"
#include "compiler/Target/Host/MemoryOpBefore.h"
#include "compiler/Transforms/OnlineSoftmax.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include <functional>
#include <limits>

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDABLOCKREDUCTIONS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

/// Whether `op` is a reduction this pass takes: on static dense-or-strided
/// buffers, parallel loops first and then at least kMinReducedElements
/// reduced, outputs that are not read as inputs and do not move with the
/// reduced loops, unless stored (isStoredOutput).
bool isBlockReduction(linalg::GenericOp op, int64_t &parallelCount,
                      int64_t &reducedCount) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() == 0)
    return false;
  for (Value v : op->getOperands())
    if (auto type = dyn_cast<MemRefType>(v.getType()); type && !type.hasStaticShape())
      return false;
  std::optional<std::pair<int64_t, int64_t>> counts = parallelThenReduced(op);
  if (!counts)
    return false;
  std::tie(parallelCount, reducedCount) = *counts;
  // A loop index inside a nested region would be cloned unmapped.
  bool nestedIndex = false;
  op.getRegion().walk(
      [&](linalg::IndexOp idx) { nestedIndex |= idx->getParentOp() != op; });
  if (nestedIndex)
    return false;
  unsigned firstReduced = op.getNumParallelLoops();
  if (reducedCount < kMinReducedElements)
    return false;
  if (parallelCount >= kThreadPerOutputColumns && isColumnReduction(op))
    return false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (unsigned d = firstReduced; d < op.getNumLoops(); ++d)
      if (map.isFunctionOfDim(d) && !isStoredOutput(op, init))
        return false;
    if (llvm::is_contained(op.getDpsInputs(), init.get()))
      return false;
  }
  return true;
}

/// `flat` as indices of `extents`, the last varying fastest.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value flat,
                               ArrayRef<int64_t> extents) {
  SmallVector<Value> indices(extents.size());
  for (int64_t d = int64_t(extents.size()) - 1; d > 0; --d) {
    Value extent = arith::ConstantIndexOp::create(b, loc, extents[d]);
    indices[d] = arith::RemUIOp::create(b, loc, flat, extent);
    flat = arith::DivUIOp::create(b, loc, flat, extent);
  }
  indices[0] = flat; // below its extent: the launch or the loop bounds it
  return indices;
}

/// The indices `map` gives for the loop indices `loops`.
SmallVector<Value> apply(OpBuilder &b, Location loc, AffineMap map, ValueRange loops) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      out.push_back(loops[dim.getPosition()]);
      continue;
    }
    out.push_back(affine::AffineApplyOp::create(
        b, loc, AffineMap::get(map.getNumDims(), 0, e), loops));
  }
  return out;
}

/// How a block's threads' partials of a reduction's outputs start, become
/// one, and fold into the outputs.
struct Combine {
  /// Where each thread's partial of each output starts.
  SmallVector<TypedAttr> identities;
  /// The block's totals from each thread's partials (every thread gets them).
  std::function<SmallVector<Value>(OpBuilder &, Location, ValueRange partials)>
      acrossBlock;
  /// The outputs' new values from their old ones and the block's totals.
  std::function<SmallVector<Value>(OpBuilder &, Location, ValueRange olds,
                                   ValueRange totals)>
      intoOutputs;
};

/// Plain folds: partials from the combiners' identities, one all-reduce each,
/// and the combiner folding the total into the output, as linalg does.
Combine combineFolds(ArrayRef<Fold> folds) {
  Combine c;
  for (const Fold &f : folds)
    c.identities.push_back(cast<TypedAttr>(*arith::getNeutralElement(f.combiner)));
  SmallVector<Fold> kept(folds);
  c.acrossBlock = [kept](OpBuilder &b, Location loc, ValueRange partials) {
    SmallVector<Value> totals;
    for (auto [partial, f] : llvm::zip(partials, kept))
      totals.push_back(gpu::AllReduceOp::create(
                           b, loc, partial,
                           gpu::AllReduceOperationAttr::get(b.getContext(), f.kind),
                           /*uniform=*/true)
                           .getResult());
    return totals;
  };
  c.intoOutputs = [kept](OpBuilder &b, Location loc, ValueRange olds, ValueRange totals) {
    SmallVector<Value> folded;
    for (auto [old, total, f] : llvm::zip(olds, totals, kept)) {
      IRMapping map;
      map.map(f.combiner->getOperand(f.accumulatorOperand), old);
      map.map(f.combiner->getOperand(1 - f.accumulatorOperand), total);
      folded.push_back(b.clone(*f.combiner, map)->getResult(0));
    }
    return folded;
  };
  return c;
}

/// A softmax's running (maximum, sum of exp(x - maximum)) pair
/// (sinter-online-softmax): the block's maximum first, then each thread's
/// sum rescaled to it and added up; the output's pair takes the block's the
/// same way.
Combine combineOnlineSoftmax(linalg::GenericOp op) {
  Combine c;
  auto maxType =
      cast<FloatType>(cast<MemRefType>(op.getDpsInits()[0].getType()).getElementType());
  auto sumType =
      cast<FloatType>(cast<MemRefType>(op.getDpsInits()[1].getType()).getElementType());
  Builder b(op.getContext());
  c.identities = {b.getFloatAttr(maxType, -std::numeric_limits<double>::infinity()),
                  b.getFloatAttr(sumType, 0.0)};
  // The maximum as the body takes it (maxnumf ignores a NaN, maximumf not).
  Operation *fold = op.getRegion().front().getTerminator()->getOperand(0).getDefiningOp();
  bool ignoresNaN = isa_and_nonnull<arith::MaxNumFOp>(fold);
  c.acrossBlock = [ignoresNaN](OpBuilder &b, Location loc, ValueRange partials) {
    auto all = [&](Value v, gpu::AllReduceOperation kind) -> Value {
      return gpu::AllReduceOp::create(
                 b, loc, v, gpu::AllReduceOperationAttr::get(b.getContext(), kind),
                 /*uniform=*/true)
          .getResult();
    };
    Value max = all(partials[0], ignoresNaN ? gpu::AllReduceOperation::MAXNUMF
                                            : gpu::AllReduceOperation::MAXIMUMF);
    Value sum = all(rescaledSum(b, loc, partials[1], partials[0], max),
                    gpu::AllReduceOperation::ADD);
    return SmallVector<Value>{max, sum};
  };
  c.intoOutputs = [ignoresNaN](OpBuilder &b, Location loc, ValueRange olds,
                               ValueRange totals) {
    Value max = ignoresNaN
                    ? arith::MaxNumFOp::create(b, loc, olds[0], totals[0]).getResult()
                    : arith::MaximumFOp::create(b, loc, olds[0], totals[0]).getResult();
    Value sum = arith::AddFOp::create(b, loc, rescaledSum(b, loc, olds[1], olds[0], max),
                                      rescaledSum(b, loc, totals[1], totals[0], max));
    return SmallVector<Value>{max, sum};
  };
  return c;
}

/// Whether `op` writes every element of `output`: each of its dimensions is
/// a loop's (whose range is the dimension), each loop once, or of size 1.
bool writesEveryElement(linalg::GenericOp op, OpOperand *output) {
  auto type = cast<MemRefType>(output->get().getType());
  llvm::SmallDenseSet<unsigned> loops;
  for (auto [d, e] : llvm::enumerate(op.getMatchingIndexingMap(output).getResults())) {
    if (type.getDimSize(d) == 1)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || !loops.insert(dim.getPosition()).second)
      return false;
  }
  return true;
}

/// For each output of `op`, the fill that writes it before `op`, if any,
/// with only ops between them that touch no byte of `op`'s outputs (a bias
/// gradient's partial sums between the fill of its total and the fold of
/// its partials). The reduction writes every element of its outputs, so
/// their fill's value can be folded in by the reduction itself, and the
/// fill's launch dropped.
SmallVector<linalg::FillOp> fillsJustBefore(linalg::GenericOp op,
                                            BufferOverlaps &overlaps) {
  SmallVector<linalg::FillOp> fills(op.getNumDpsInits());
  auto missesOutputs = [&](const Accesses &a) {
    return llvm::all_of(op.getDpsInits(), [&](Value out) {
      return llvm::all_of(a.reads, [&](Value v) { return overlaps.disjoint(v, out); }) &&
             llvm::all_of(a.writes, [&](Value v) { return overlaps.disjoint(v, out); });
    });
  };
  for (Operation *before = host::memoryOpBefore(op); before;
       before = host::memoryOpBefore(before)) {
    auto fill = dyn_cast<linalg::FillOp>(before);
    auto at = fill && fill.hasPureBufferSemantics()
                  ? llvm::find(op.getDpsInits(), fill.getDpsInits()[0])
                  : op.getDpsInits().end();
    if (at == op.getDpsInits().end()) {
      std::optional<Accesses> a = accessesOf(before);
      if (a && missesOutputs(*a))
        continue;
      break;
    }
    unsigned i = at - op.getDpsInits().begin();
    if (!fills[i] && writesEveryElement(op, op.getDpsInitOperand(i)))
      fills[i] = fill;
  }
  return fills;
}

/// Reduced elements from which a row read twice gets a block of 1024.
constexpr int64_t kLongRow = 16384;

/// A value to store, and where.
struct Stored {
  Value value, buffer;
  SmallVector<Value> at;
};

/// `consumer`'s body at the block's row `outer` and, for a loop over the
/// row's elements, at the thread's element `reduced`: the per-row values
/// in `held` read from there, the rest loaded. Its results go to `stores`
/// and, when it runs once per row, to `held` for the loops after it.
void emitConsumer(OpBuilder &b, Location loc, const ReductionConsumer &consumer,
                  ArrayRef<Value> outer, ArrayRef<Value> reduced,
                  SmallVectorImpl<std::pair<RowSlot, Value>> &held,
                  SmallVectorImpl<Stored> &stores) {
  linalg::GenericOp c = consumer.op;
  SmallVector<Value> at;
  for (LoopPlace place : consumer.loops)
    at.push_back(place.kind == LoopPlace::Parallel ? outer[place.loop]
                 : place.kind == LoopPlace::Reduced
                     ? reduced[place.loop]
                     : arith::ConstantIndexOp::create(b, loc, 0));
  IRMapping map;
  for (OpOperand &operand : c->getOpOperands()) {
    AffineMap m = c.getMatchingIndexingMap(&operand);
    std::optional<SmallVector<int64_t>> row = rowIndex(m, consumer.loops);
    auto it = llvm::find_if(held, [&](auto &h) {
      return row && h.first == RowSlot{operand.get(), *row};
    });
    BlockArgument arg = c.getMatchingBlockArgument(&operand);
    if (!isa<MemRefType>(operand.get().getType()))
      map.map(arg, operand.get()); // a scalar input
    else if (c.isDpsInput(&operand) && it != held.end())
      map.map(arg, it->second);
    else if (!arg.use_empty())
      map.map(arg, memref::LoadOp::create(b, loc, operand.get(), apply(b, loc, m, at)));
  }
  Block &body = c.getRegion().front();
  for (Operation &inner : body.without_terminator()) {
    if (auto idx = dyn_cast<linalg::IndexOp>(inner))
      map.map(idx.getResult(), at[idx.getDim()]);
    else
      b.clone(inner, map);
  }
  for (OpOperand &init : c.getDpsInitsMutable()) {
    AffineMap m = c.getMatchingIndexingMap(&init);
    Value v = map.lookupOrDefault(
        body.getTerminator()->getOperand(init.getOperandNumber() - c.getNumDpsInputs()));
    stores.push_back({v, init.get(), apply(b, loc, m, at)});
    if (!consumer.perElement())
      held.push_back({{init.get(), *rowIndex(m, consumer.loops)}, v});
  }
}

/// The loop in which thread `tid` of a block folds every `threads`-th of
/// the `reducedCount` elements of its row, from the `identities`, into its partials of the
/// `folded` outputs (the loop's results); the other outputs it stores.
scf::ForOp emitThreadPartials(OpBuilder &b, linalg::GenericOp op,
                              ArrayRef<OpOperand *> folded, ArrayRef<Value> outer, Value tid,
                              int64_t reducedCount, int64_t threads,
                              ArrayRef<Value> identities) {
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  ArrayRef<int64_t> reducedExtents =
      ArrayRef<int64_t>(ranges).drop_front(op.getNumParallelLoops());
  auto index = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  auto strided =
      scf::ForOp::create(b, loc, tid, index(reducedCount), index(threads), identities);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(strided.getBody());
  SmallVector<Value> loops(outer);
  llvm::append_range(loops, delinearize(b, loc, strided.getInductionVar(), reducedExtents));
  IRMapping map;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value element = input->get();
    if (isa<MemRefType>(element.getType()))
      element = memref::LoadOp::create(b, loc, element,
                                       apply(b, loc, op.getMatchingIndexingMap(input), loops));
    map.map(op.getMatchingBlockArgument(input), element);
  }
  for (auto [i, init] : llvm::enumerate(folded))
    map.map(op.getMatchingBlockArgument(init), strided.getRegionIterArgs()[i]);
  Block &payload = op.getRegion().front();
  for (Operation &inner : payload.without_terminator()) {
    if (auto idx = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(idx.getResult(), loops[idx.getDim()]);
      continue;
    }
    b.clone(inner, map);
  }
  SmallVector<Value> next;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    Value v = map.lookupOrDefault(
        payload.getTerminator()->getOperand(init.getOperandNumber() - op.getNumDpsInputs()));
    if (llvm::is_contained(folded, &init))
      next.push_back(v);
    else
      memref::StoreOp::create(b, loc, v, init.get(),
                              apply(b, loc, op.getMatchingIndexingMap(&init), loops));
  }
  scf::YieldOp::create(b, loc, next);
  return strided;
}

/// `op` as a block per output row. Its outputs numbered in `stored` are
/// written element by element; the others fold, as `combine` says.
void launchBlockReduction(linalg::GenericOp op, const Combine &combine,
                          ArrayRef<unsigned> stored, int64_t parallelCount,
                          int64_t reducedCount, DenseSet<Operation *> &consumed,
                          BufferOverlaps &overlaps) {
  SmallVector<linalg::FillOp> fills = fillsJustBefore(op, overlaps);
  SmallVector<OpOperand *> folded, storedOutputs;
  for (OpOperand &init : op.getDpsInitsMutable())
    (llvm::is_contained(stored, init.getOperandNumber() - op.getNumDpsInputs())
         ? storedOutputs
         : folded)
        .push_back(&init);
  SmallVector<ReductionConsumer> consumers =
      consumersOf(op, folded, storedOutputs, overlaps);
  for (ReductionConsumer &consumer : consumers) {
    consumed.insert(consumer.op);
    for (Operation *def : consumer.hoisted)
      if (!def->isBeforeInBlock(op))
        def->moveBefore(op);
  }
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned parallelLoops = op.getNumParallelLoops();
  ArrayRef<int64_t> parallelExtents = ArrayRef<int64_t>(ranges).take_front(parallelLoops);
  ArrayRef<int64_t> reducedExtents = ArrayRef<int64_t>(ranges).drop_front(parallelLoops);
  // A row read again by the loops over its elements should still be in
  // L2 then: a long row (cross-entropy's 50,257 logits, 201 KB) gets 1024
  // threads, so that only two blocks per multiprocessor hold rows in
  // flight (about 53 MB on an H100's or H200's 132), not eight.
  bool perElement =
      llvm::any_of(consumers, [](const ReductionConsumer &c) { return c.perElement(); });
  int64_t threads = perElement && reducedCount >= kLongRow ? 1024
                    : reducedCount >= 256                  ? 256
                                                           : 32;
  auto index = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value one = index(1);
  auto launch = gpu::LaunchOp::create(b, loc, index(parallelCount), one, one,
                                      index(threads), one, one);
  Block &body = launch.getBody().front();
  b.setInsertionPointToEnd(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);

  SmallVector<Value> outer =
      parallelLoops == 0 ? SmallVector<Value>()
                         : delinearize(b, loc, launch.getBlockIds().x, parallelExtents);
  SmallVector<Value> identities;
  for (TypedAttr identity : combine.identities)
    identities.push_back(arith::ConstantOp::create(b, loc, identity));

  // Each thread's partial: every `threads`-th reduced element from its own.
  Value tid = launch.getThreadIds().x;
  scf::ForOp strided =
      emitThreadPartials(b, op, folded, outer, tid, reducedCount, threads, identities);

  // The block's result, folded into the output by one thread. Loops that
  // run once per row read it, and what they compute, from the block too.
  // When loops over the row's elements follow, every thread computes the
  // row's values (all reading the outputs' old values before thread 0
  // stores the new ones), then walks its elements again.
  SmallVector<Value> reducedAtZero(reducedExtents.size(), index(0));
  SmallVector<Value> totals = combine.acrossBlock(b, loc, strided.getResults());
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, index(0));
  scf::IfOp ifFirst;
  if (!perElement) {
    ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  }
  SmallVector<Value> loops(outer);
  llvm::append_range(loops, reducedAtZero); // the outputs do not read them
  SmallVector<Value> olds;
  SmallVector<Stored> stores;
  for (OpOperand *init : folded) {
    SmallVector<Value> at = apply(b, loc, op.getMatchingIndexingMap(init), loops);
    linalg::FillOp fill = fills[init->getOperandNumber() - op.getNumDpsInputs()];
    olds.push_back(fill ? fill.getInputs()[0]
                        : memref::LoadOp::create(b, loc, init->get(), at).getResult());
    stores.push_back({Value(), init->get(), at});
  }
  SmallVector<Value> news = combine.intoOutputs(b, loc, olds, totals);
  SmallVector<std::pair<RowSlot, Value>> held;
  SmallVector<LoopPlace> places = reductionPlaces(op.getNumLoops(), parallelLoops);
  for (auto [i, init] : llvm::enumerate(folded)) {
    stores[i].value = news[i];
    if (std::optional<SmallVector<int64_t>> at =
            rowIndex(op.getMatchingIndexingMap(init), places))
      held.push_back({{init->get(), *at}, news[i]});
  }
  for (ReductionConsumer &consumer : consumers)
    if (!consumer.perElement())
      emitConsumer(b, loc, consumer, outer, {}, held, stores);
  if (perElement) {
    gpu::BarrierOp::create(b, loc);
    ifFirst = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&ifFirst.getThenRegion().front());
  }
  for (Stored &store : stores)
    memref::StoreOp::create(b, loc, store.value, store.buffer, store.at);
  if (perElement) {
    b.setInsertionPointAfter(ifFirst);
    auto walk = scf::ForOp::create(b, loc, tid, index(reducedCount), index(threads));
    b.setInsertionPointToStart(walk.getBody());
    SmallVector<Value> reduced =
        delinearize(b, loc, walk.getInductionVar(), reducedExtents);
    SmallVector<Stored> elementStores;
    for (ReductionConsumer &consumer : consumers)
      if (consumer.perElement())
        emitConsumer(b, loc, consumer, outer, reduced, held, elementStores);
    for (Stored &store : elementStores)
      memref::StoreOp::create(b, loc, store.value, store.buffer, store.at);
  }
  for (ReductionConsumer &consumer : consumers)
    consumer.op->erase();
  for (linalg::FillOp fill : fills)
    if (fill)
      fill->erase();
  op.erase();
}

struct CUDABlockReductions : public impl::CUDABlockReductionsBase<CUDABlockReductions> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    // Loops that joined a reduction's launch (and are gone).
    DenseSet<Operation *> consumed;
    BufferOverlaps overlaps;
    for (linalg::GenericOp op : generics) {
      if (consumed.contains(op))
        continue;
      int64_t parallelCount = 0, reducedCount = 0;
      if (!isBlockReduction(op, parallelCount, reducedCount))
        continue;
      if (attrs::onlineSoftmax.has(op) && op.getNumDpsInits() == 2) {
        launchBlockReduction(op, combineOnlineSoftmax(op), {}, parallelCount,
                             reducedCount, consumed, overlaps);
        continue;
      }
      SmallVector<unsigned> stored;
      std::optional<SmallVector<Fold>> folds = foldsOf(op, &stored);
      if (folds && !folds->empty())
        launchBlockReduction(op, combineFolds(*folds), stored, parallelCount,
                             reducedCount, consumed, overlaps);
    }
  }
};

} // namespace
} // namespace sinter::cuda
