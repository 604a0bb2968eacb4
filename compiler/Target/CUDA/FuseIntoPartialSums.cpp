//===- FuseIntoPartialSums.cpp - A partial sum computes what it sums ------===//
//
// A split column sum's partial reads its input cut into chunks (an
// expand_shape). When an all-parallel loop computes that input and other
// ops read that loop's other results, upstream's elementwise fusion cannot
// take the loop in as it is: its iteration space is the uncut one. So the
// loop is first expanded the way the input was cut, then fused; the fused
// loop yields the other results at the elements it visits. An input no
// loop computes (an argument: the gradient a layer's backward pass starts
// from) may have a sibling reader, a loop that rounds it to bf16 for the
// matmuls: that loop is made to pass the input through as well, and the
// partial reads it from there, so the rounding joins the partial the same
// way.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/FuseIntoPartialSums.h"
#include "compiler/Transforms/FusionConditions.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace sinter::cuda {
namespace {

/// Whether every user of `producer` but `except` comes after `op` in its
/// block.
bool usersFollow(Operation *producer, Operation *except, Operation *op) {
  for (Operation *user : producer->getUsers())
    if (user != except &&
        (user->getBlock() != op->getBlock() || !op->isBeforeInBlock(user)))
      return false;
  return true;
}

/// An all-parallel loop on static tensors whose maps only pick and order
/// loops (or read a unit dimension at 0: a row's mean as [rows, 1]), that
/// reads no output and no loop index, and writes `result` along its loops
/// (an identity map).
bool isExpandable(linalg::GenericOp producer, OpResult result) {
  if (!producer.hasPureTensorSemantics() || producer.hasIndexSemantics() ||
      producer.getNumLoops() != producer.getNumParallelLoops() ||
      !producer
           .getMatchingIndexingMap(producer.getDpsInitOperand(result.getResultNumber()))
           .isIdentity())
    return false;
  for (OpOperand &operand : producer->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    AffineMap map = producer.getMatchingIndexingMap(&operand);
    if (!type || !type.hasStaticShape() ||
        !map.isProjectedPermutation(/*allowZeroInResults=*/true))
      return false;
    for (auto [d, e] : llvm::enumerate(map.getResults()))
      if (!isa<AffineDimExpr>(e) && type.getDimSize(d) != 1)
        return false; // a column read at 0 is no unit dimension
  }
  // Inside the partial, its inputs alone bound the loops (upstream's
  // fusion asks that of a reduction), so together they read every loop.
  llvm::SmallBitVector read(producer.getNumLoops());
  for (OpOperand *input : producer.getDpsInputOperands())
    for (AffineExpr e : producer.getMatchingIndexingMap(input).getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        read.set(dim.getPosition());
  return read.all() && llvm::none_of(producer.getDpsInitsMutable(), [&](OpOperand &init) {
           return producer.payloadUsesValueFromOperand(&init);
         });
}

/// `producer` over the loops of `expand` (which cuts its result `result`):
/// each loop becomes the loops of its dimension's group, its operands are
/// cut the same way, and its other results are collapsed back for their
/// users, after `after`.
linalg::GenericOp expandLoops(RewriterBase &rewriter, linalg::GenericOp producer,
                              tensor::ExpandShapeOp expand, Operation *after) {
  MLIRContext *ctx = producer.getContext();
  Location loc = producer.getLoc();
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  ArrayRef<int64_t> sizes = expand.getResultType().getShape();
  unsigned rank = sizes.size();
  // The operand cut along the groups of the loops it reads, and its map.
  auto cut = [&](OpOperand &operand, SmallVector<ReassociationIndices> &cutGroups) {
    AffineMap map = producer.getMatchingIndexingMap(&operand);
    SmallVector<AffineExpr> results;
    SmallVector<int64_t> shape;
    for (AffineExpr e : map.getResults()) {
      ReassociationIndices group;
      if (!isa<AffineDimExpr>(e)) { // a unit dimension read at 0 stays one
        group.push_back(shape.size());
        shape.push_back(1);
        results.push_back(e);
        cutGroups.push_back(group);
        continue;
      }
      for (int64_t loop : groups[cast<AffineDimExpr>(e).getPosition()]) {
        group.push_back(shape.size());
        shape.push_back(sizes[loop]);
        results.push_back(getAffineDimExpr(loop, ctx));
      }
      cutGroups.push_back(group);
    }
    Value value = operand.get();
    auto type = cast<RankedTensorType>(value.getType());
    if (static_cast<int64_t>(shape.size()) != type.getRank()) {
      auto cutType = RankedTensorType::get(shape, type.getElementType());
      if (value.getDefiningOp<tensor::EmptyOp>())
        value = tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
      else
        value = tensor::ExpandShapeOp::create(rewriter, loc, cutType, value, cutGroups);
    }
    return std::make_pair(value, AffineMap::get(rank, 0, results, ctx));
  };
  SmallVector<Value> inputs, inits;
  SmallVector<AffineMap> maps;
  SmallVector<SmallVector<ReassociationIndices>> initGroups;
  for (OpOperand *input : producer.getDpsInputOperands()) {
    SmallVector<ReassociationIndices> unused;
    auto [value, map] = cut(*input, unused);
    inputs.push_back(value);
    maps.push_back(map);
  }
  for (OpOperand &init : producer.getDpsInitsMutable()) {
    auto [value, map] = cut(init, initGroups.emplace_back());
    inits.push_back(value);
    maps.push_back(map);
  }
  SmallVector<utils::IteratorType> parallel(rank, utils::IteratorType::parallel);
  auto made = linalg::GenericOp::create(rewriter, loc, ValueRange(inits).getTypes(),
                                        inputs, inits, maps, parallel);
  rewriter.cloneRegionBefore(producer.getRegion(), made.getRegion(),
                             made.getRegion().end());
  rewriter.setInsertionPointAfter(after);
  for (auto [i, result] : llvm::enumerate(producer.getResults())) {
    // The fused loop writes only what others read; the cut value the partial
    // reads is written too when ops after it read it whole (a gradient that
    // flows on past its bias's sum).
    auto othersRead = [&](OpOperand &use) { return use.getOwner() != expand; };
    if (llvm::none_of(result.getUses(), othersRead))
      continue;
    Value whole = result.getType() == made.getResult(i).getType()
                      ? made.getResult(i)
                      : tensor::CollapseShapeOp::create(rewriter, loc, result.getType(),
                                                        made.getResult(i), initGroups[i])
                            .getResult();
    rewriter.replaceUsesWithIf(result, whole, othersRead);
  }
  return made;
}

/// A loop before `partial`, in its block, that reads `x` element by element
/// (an identity map) and can be expanded, whose results only ops after
/// `partial` read: passing `x` through, it can compute what `partial` reads,
/// and meets what canTakeIn asks of a producer.
OpOperand *siblingReader(Value x, linalg::GenericOp partial) {
  for (OpOperand &use : x.getUses()) {
    auto sibling = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!sibling || sibling->getBlock() != partial->getBlock() ||
        !sibling->isBeforeInBlock(partial) || !sibling.isDpsInput(&use) ||
        !sibling.getMatchingIndexingMap(&use).isIdentity() ||
        sibling.getNumLoops() != cast<RankedTensorType>(x.getType()).getRank() ||
        !isExpandable(sibling, sibling->getResult(0)) ||
        !usersFollow(sibling, nullptr, partial))
      continue;
    return &use;
  }
  return nullptr;
}

/// Whether `partial`, reading `producer`'s result `result` through
/// `expand` (and nothing else of it), can take `producer` in.
bool canTakeIn(linalg::GenericOp producer, OpResult result, tensor::ExpandShapeOp expand,
               linalg::GenericOp partial) {
  return producer->getBlock() == partial->getBlock() && isExpandable(producer, result) &&
         usersFollow(producer, expand, partial) &&
         llvm::count_if(partial->getOperands(), [&](Value v) {
           return v.getDefiningOp() == producer.getOperation() ||
                  v.getDefiningOp() == expand.getOperation();
         }) == 1;
}

/// `sibling` with one more result: `x`, which it reads at `use`, passed
/// through (an identity map onto a new tensor.empty).
OpResult passThrough(RewriterBase &rewriter, linalg::GenericOp sibling, OpOperand &use) {
  Location loc = sibling.getLoc();
  auto type = cast<RankedTensorType>(use.get().getType());
  rewriter.setInsertionPoint(sibling);
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
  SmallVector<Value> inits(sibling.getDpsInits());
  inits.push_back(empty);
  SmallVector<AffineMap> maps = sibling.getIndexingMapsArray();
  maps.push_back(sibling.getMatchingIndexingMap(&use));
  auto made = linalg::GenericOp::create(rewriter, loc, ValueRange(inits).getTypes(),
                                        sibling.getDpsInputs(), inits, maps,
                                        sibling.getIteratorTypesArray());
  rewriter.cloneRegionBefore(sibling.getRegion(), made.getRegion(),
                             made.getRegion().end());
  Block &body = made.getRegion().front();
  body.addArgument(type.getElementType(), loc);
  Operation *yield = body.getTerminator();
  SmallVector<Value> yielded(yield->getOperands());
  yielded.push_back(body.getArgument(use.getOperandNumber()));
  rewriter.modifyOpInPlace(yield, [&] { yield->setOperands(yielded); });
  rewriter.replaceOp(sibling, made.getResults().drop_back());
  return made->getResult(made->getNumResults() - 1);
}

} // namespace

void fuseProducerIntoPartial(RewriterBase &rewriter, linalg::GenericOp partial) {
  for (OpOperand *operand : partial.getDpsInputOperands()) {
    auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand || !expand->hasOneUse() ||
        !partial.getMatchingIndexingMap(operand).isPermutation())
      continue;
    auto result = dyn_cast<OpResult>(expand.getSrc());
    auto producer = result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
    if (auto x = dyn_cast<BlockArgument>(expand.getSrc())) {
      // An input no loop makes, read by a sibling loop: the sibling passes
      // it through and becomes its producer (only now that it will be taken
      // in, so that no loop is left writing a copy of the input).
      OpOperand *read = siblingReader(x, partial);
      if (!read || llvm::any_of(partial->getOperands(), [&](Value v) {
            return v.getDefiningOp() == read->getOwner();
          }))
        continue;
      result = passThrough(rewriter, cast<linalg::GenericOp>(read->getOwner()), *read);
      producer = cast<linalg::GenericOp>(result.getOwner());
      rewriter.modifyOpInPlace(expand, [&] { expand.getSrcMutable().set(result); });
    } else if (!producer || !canTakeIn(producer, result, expand, partial)) {
      continue;
    }
    rewriter.setInsertionPoint(partial);
    linalg::GenericOp made = expandLoops(rewriter, producer, expand, partial);
    rewriter.replaceAllUsesWith(expand.getResult(),
                                made.getResult(result.getResultNumber()));
    rewriter.eraseOp(expand);
    rewriter.eraseOp(producer);
    // The expanded loop stays if this fails, as correct as the one it
    // replaced. (A sibling that passes its input through cannot fail here:
    // its cut input reads every loop.)
    if (!linalg::areElementwiseOpsFusable(operand))
      return;
    // The fused loop goes where the partial was, before the collapsed
    // results' users.
    rewriter.setInsertionPoint(partial);
    (void)fuseAndReplace(rewriter, operand);
    return;
  }
}

} // namespace sinter::cuda
