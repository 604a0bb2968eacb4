//===- SplitColumnReductions.cpp - Narrow column sums, split over rows ----===//
//
// A bias gradient sums a [16384, 768] gradient over its rows into 768
// outputs. A thread per output reads a row's neighbours together, but 768
// threads cannot fill a GPU; a block per output fills it, but its threads
// read down a column, each element a sector of its own. Here such a
// reduction becomes two: the rows are cut into K chunks, a thread per
// (chunk, column) folds its chunk into a [K, 768] partial (from the
// combiner's identity), and a second reduction folds the K partials, in
// order, into the output. The order of the sum depends on the shapes
// alone, so every run gives the same bits.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/FuseIntoPartialSums.h"
#include "compiler/Target/CUDA/Passes.h"
#include "compiler/Target/CUDA/Reductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDASPLITCOLUMNREDUCTIONS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

/// Threads a split reduction aims for: about half of what an H200's 132
/// SMs hold at once, each thread then walking many rows.
constexpr int64_t kTargetThreads = 128 * 1024;
/// Rows a thread folds at least: fewer, and the partials cost what the
/// threads save.
constexpr int64_t kMinRowsPerThread = 32;
/// Fewer chunks than this are not worth a second reduction.
constexpr int64_t kMinChunks = 4;

/// The reduced loop to cut into `chunks` chunks.
struct Split {
  unsigned loop;
  int64_t chunks;
};

/// Whether every input indexes `loop` at most by one plain result, so that
/// cutting the loop is cutting that dimension of the input.
bool isCuttable(linalg::GenericOp op, unsigned loop) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    int uses = 0;
    for (AffineExpr e : map.getResults()) {
      if (!e.isFunctionOfDim(loop))
        continue;
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim || ++uses > 1)
        return false;
    }
  }
  return true;
}

/// The largest divisor of `n` that is at most `limit`.
int64_t largestDivisorUpTo(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0)
      return d;
  return 1;
}

std::optional<Split> splitOf(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.hasIndexSemantics() ||
      op.getNumDpsInits() == 0 || !isColumnReduction(op))
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  // Parallel loops first (sinter-parallel-reductions put them there).
  unsigned parallelLoops = op.getNumParallelLoops();
  for (unsigned d = 0; d < iterators.size(); ++d)
    if ((d < parallelLoops) != (iterators[d] == utils::IteratorType::parallel))
      return std::nullopt;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (!map.isProjectedPermutation() ||
        !cast<RankedTensorType>(init.get().getType()).hasStaticShape())
      return std::nullopt;
    for (unsigned d = parallelLoops; d < iterators.size(); ++d)
      if (map.isFunctionOfDim(d))
        return std::nullopt;
  }
  int64_t outputs = 1, rows = 1;
  for (auto [d, range] : llvm::enumerate(ranges))
    (d < parallelLoops ? outputs : rows) *= range;
  int64_t limit = std::min(kTargetThreads / outputs, rows / kMinRowsPerThread);
  std::optional<Split> best;
  for (unsigned d = parallelLoops; d < ranges.size(); ++d) {
    if (!isCuttable(op, d))
      continue;
    int64_t chunks = largestDivisorUpTo(ranges[d], limit);
    // Fewer threads, and block reductions would take the partial down its
    // columns again.
    if (chunks >= kMinChunks && chunks * outputs >= kThreadPerOutputColumns &&
        (!best || chunks > best->chunks))
      best = Split{d, chunks};
  }
  return best;
}

/// `value` with dimension `at` cut into [chunks, extent / chunks].
Value cutDimension(RewriterBase &rewriter, Location loc, Value value, unsigned at,
                   int64_t chunks) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[at] /= chunks;
  shape.insert(shape.begin() + at, chunks);
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0, next = 0; d < type.getRank(); ++d) {
    ReassociationIndices group{next++};
    if (d == at)
      group.push_back(next++);
    groups.push_back(group);
  }
  return tensor::ExpandShapeOp::create(
      rewriter, loc, RankedTensorType::get(shape, type.getElementType()), value, groups);
}

/// In `partial`'s body, each fold's accumulator is the combiner's identity
/// at the first of its reduced iterations (every reduced loop's index 0),
/// whatever its init held: the init need not be filled.
void startFromIdentity(RewriterBase &rewriter, linalg::GenericOp partial,
                       ArrayRef<Fold> folds) {
  Block &body = partial.getRegion().front();
  Location loc = partial.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(&body);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value first;
  for (auto [d, iterator] : llvm::enumerate(partial.getIteratorTypesArray())) {
    if (iterator != utils::IteratorType::reduction)
      continue;
    Value index = linalg::IndexOp::create(rewriter, loc, d);
    Value atZero =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, index, zero);
    first =
        first ? arith::AndIOp::create(rewriter, loc, first, atZero).getResult() : atZero;
  }
  for (auto [i, fold] : llvm::enumerate(folds)) {
    BlockArgument acc = body.getArgument(partial.getNumDpsInputs() + i);
    Value identity = arith::ConstantOp::create(
        rewriter, loc, cast<TypedAttr>(*arith::getNeutralElement(fold.combiner)));
    Value start = arith::SelectOp::create(rewriter, loc, first, identity, acc);
    rewriter.modifyOpInPlace(fold.combiner, [&] {
      fold.combiner->setOperand(fold.accumulatorOperand, start);
    });
  }
}

/// out = fold over rows  ->  partial[k] = fold over chunk k's rows (from the
/// identity); out = fold over k of partial[k]. Returns the partial.
linalg::GenericOp splitColumnReduction(linalg::GenericOp op, ArrayRef<Fold> folds,
                                       Split split, RewriterBase &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  rewriter.setInsertionPoint(op);
  unsigned loops = op.getNumLoops();
  // The partial's loops: the chunk, then the old loops (the cut one now the
  // row inside its chunk).
  AffineExpr chunk = getAffineDimExpr(0, ctx);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    Value value = input->get();
    SmallVector<AffineExpr> results;
    for (auto [at, e] : llvm::enumerate(map.getResults())) {
      if (e.isFunctionOfDim(split.loop)) {
        value = cutDimension(rewriter, loc, value, at, split.chunks);
        results.push_back(chunk);
      }
      results.push_back(e.shiftDims(loops, 1));
    }
    inputs.push_back(value);
    maps.push_back(AffineMap::get(loops + 1, 0, results, ctx));
  }
  SmallVector<Value> partialInits;
  SmallVector<Type> partialTypes;
  for (auto [init, fold] : llvm::zip(op.getDpsInitsMutable(), folds)) {
    auto type = cast<RankedTensorType>(init.get().getType());
    SmallVector<int64_t> shape{split.chunks};
    llvm::append_range(shape, type.getShape());
    auto partialType = RankedTensorType::get(shape, type.getElementType());
    // Not filled: each partial starts from the identity at its first row
    // (startFromIdentity), so no launch writes it first.
    partialInits.push_back(
        tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType()));
    partialTypes.push_back(partialType);
    SmallVector<AffineExpr> results{chunk};
    for (AffineExpr e : op.getMatchingIndexingMap(&init).getResults())
      results.push_back(e.shiftDims(loops, 1));
    maps.push_back(AffineMap::get(loops + 1, 0, results, ctx));
  }
  SmallVector<utils::IteratorType> iterators{utils::IteratorType::parallel};
  llvm::append_range(iterators, op.getIteratorTypesArray());
  auto partial = linalg::GenericOp::create(rewriter, loc, partialTypes, inputs,
                                           partialInits, maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), partial.getRegion(),
                              partial.getRegion().end());
  // The cut loop's range is now a chunk's, which the cut inputs give.
  startFromIdentity(rewriter, partial, folds);

  SmallVector<Value> totals;
  for (auto [i, fold] : llvm::enumerate(folds)) {
    Value init = op.getDpsInits()[i];
    unsigned rank = cast<RankedTensorType>(init.getType()).getRank();
    SmallVector<AffineExpr> partialAt{getAffineDimExpr(rank, ctx)};
    for (unsigned d = 0; d < rank; ++d)
      partialAt.push_back(getAffineDimExpr(d, ctx));
    SmallVector<utils::IteratorType> totalIterators(rank, utils::IteratorType::parallel);
    totalIterators.push_back(utils::IteratorType::reduction);
    Operation *combiner = fold.combiner;
    unsigned accumulator = fold.accumulatorOperand;
    auto total = linalg::GenericOp::create(
        rewriter, loc, TypeRange{init.getType()}, ValueRange{partial.getResult(i)},
        ValueRange{init},
        ArrayRef<AffineMap>{
            AffineMap::get(rank + 1, 0, partialAt, ctx),
            AffineMap::getMultiDimIdentityMap(rank + 1, ctx).getMajorSubMap(rank)},
        totalIterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Operation *combined = b.clone(*combiner);
          combined->setOperand(accumulator, args[1]);
          combined->setOperand(1 - accumulator, args[0]);
          linalg::YieldOp::create(b, l, combined->getResult(0));
        });
    totals.push_back(total.getResult(0));
  }
  rewriter.replaceOp(op, totals);
  return partial;
}

struct CUDASplitColumnReductions
    : public impl::CUDASplitColumnReductionsBase<CUDASplitColumnReductions> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      std::optional<Split> split = splitOf(op);
      if (!split)
        continue;
      if (std::optional<SmallVector<Fold>> folds = foldsOf(op))
        fuseProducerIntoPartial(rewriter,
                                splitColumnReduction(op, *folds, *split, rewriter));
    }
  }
};

} // namespace
} // namespace sinter::cuda
