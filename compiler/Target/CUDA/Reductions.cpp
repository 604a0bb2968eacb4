//===- Reductions.cpp - Shapes of linalg reductions the CUDA target maps --===//

#include "compiler/Target/CUDA/Reductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace sinter::cuda {
namespace {

std::optional<gpu::AllReduceOperation> allReduceKindOf(Operation *op) {
  using K = gpu::AllReduceOperation;
  return llvm::TypeSwitch<Operation *, std::optional<K>>(op)
      .Case([](arith::AddFOp) { return K::ADD; })
      .Case([](arith::AddIOp) { return K::ADD; })
      .Case([](arith::MulFOp) { return K::MUL; })
      .Case([](arith::MulIOp) { return K::MUL; })
      .Case([](arith::MaximumFOp) { return K::MAXIMUMF; })
      .Case([](arith::MinimumFOp) { return K::MINIMUMF; })
      .Case([](arith::MaxNumFOp) { return K::MAXNUMF; })
      .Case([](arith::MinNumFOp) { return K::MINNUMF; })
      .Case([](arith::MaxSIOp) { return K::MAXSI; })
      .Case([](arith::MinSIOp) { return K::MINSI; })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace

std::optional<std::pair<int64_t, int64_t>> parallelThenReduced(linalg::GenericOp op) {
  int64_t parallel = 1, reduced = 1;
  bool inReduced = false;
  for (auto [iterator, range] :
       llvm::zip(op.getIteratorTypesArray(), op.getStaticLoopRanges())) {
    bool isReduced = iterator == utils::IteratorType::reduction;
    if ((!isReduced && inReduced) || ShapedType::isDynamic(range))
      return std::nullopt;
    inReduced |= isReduced;
    (isReduced ? reduced : parallel) *= range;
  }
  if (!inReduced)
    return std::nullopt;
  return std::make_pair(parallel, reduced);
}

bool isStoredOutput(linalg::GenericOp op, OpOperand &init) {
  return op.getNumReductionLoops() > 0 &&
         op.getMatchingIndexingMap(&init).isPermutation() &&
         op.getMatchingBlockArgument(&init).use_empty();
}

std::optional<SmallVector<Fold>> foldsOf(linalg::GenericOp op,
                                         SmallVectorImpl<unsigned> *stored) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<Fold> folds;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (stored && isStoredOutput(op, init)) {
      stored->push_back(init.getOperandNumber() - op.getNumDpsInputs());
      continue;
    }
    BlockArgument acc = op.getMatchingBlockArgument(&init);
    Operation *combiner =
        yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs()).getDefiningOp();
    if (!combiner || combiner->getBlock() != &body || combiner->getNumOperands() != 2 ||
        !acc.hasOneUse() || !combiner->hasOneUse())
      return std::nullopt;
    std::optional<gpu::AllReduceOperation> kind = allReduceKindOf(combiner);
    if (!kind || !arith::getNeutralElement(combiner))
      return std::nullopt;
    unsigned at = combiner->getOperand(0) == acc ? 0 : 1;
    if (combiner->getOperand(at) != acc)
      return std::nullopt;
    folds.push_back({combiner, at, *kind});
  }
  return folds;
}

bool isColumnReduction(linalg::GenericOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (op.getNumParallelLoops() == 0 || op.getNumReductionLoops() == 0)
    return false;
  auto isReduced = [&](AffineExpr e) {
    return llvm::any_of(llvm::seq(unsigned(iterators.size())), [&](unsigned d) {
      return iterators[d] == utils::IteratorType::reduction && e.isFunctionOfDim(d);
    });
  };
  auto isParallel = [&](AffineExpr e) {
    return llvm::any_of(llvm::seq(unsigned(iterators.size())), [&](unsigned d) {
      return iterators[d] == utils::IteratorType::parallel && e.isFunctionOfDim(d);
    });
  };
  bool readsRows = false;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (map.getNumResults() == 0 || !llvm::any_of(map.getResults(), isReduced))
      continue; // read once per output, not along the rows
    if (!llvm::any_of(map.getResults(), isParallel))
      continue; // one element for the whole warp: a row's mean, as [rows]
    // The last index is what neighbouring threads' addresses differ by: a
    // parallel loop's (neighbours), or none (one element for the warp, a
    // row's mean). A reduced loop's would be a row reduction.
    AffineExpr last = map.getResults().back();
    if (isReduced(last))
      return false;
    readsRows |= isa<AffineDimExpr>(last);
  }
  return readsRows;
}

} // namespace sinter::cuda
