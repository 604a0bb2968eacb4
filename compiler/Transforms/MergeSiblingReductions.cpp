//===- MergeSiblingReductions.cpp - One pass for reductions of one input --===//
//
// Layer norm's backward pass sums dy * gamma * x-hat and dy * gamma along
// each row, and dy * x-hat and dy down each column: two reductions over the
// same rows, each reading dy whole. Reductions over the same loops that
// read an input in common, neither depending on the other, become one
// generic with the outputs of both, which reads the input once. Each
// output keeps its own fold, so every value is what it was.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_MERGESIBLINGREDUCTIONS
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// Whether every output of `op` is a plain fold: the yielded value is an
/// add, mul, max or min of its accumulator, which nothing else reads. A
/// target maps such reductions to blocks of threads; merged with one that is
/// not, both would lose that.
bool foldsPlainly(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument acc = op.getMatchingBlockArgument(&init);
    Operation *combiner = body.getTerminator()
                              ->getOperand(init.getOperandNumber() - op.getNumDpsInputs())
                              .getDefiningOp();
    if (!combiner || !acc.hasOneUse() || acc.getUses().begin()->getOwner() != combiner ||
        !isa<arith::AddFOp, arith::AddIOp, arith::MulFOp, arith::MulIOp,
             arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp,
             arith::MaxSIOp, arith::MinSIOp>(combiner))
      return false;
  }
  return true;
}

/// Whether `op` is a reduction this pass merges: on tensors of static
/// shapes, with a reduced loop, plain folds, no index of its loops in its
/// body (a merged body keeps its loops, but one rule is simpler to trust),
/// and no mark of another pass (a softmax's running pair).
bool isMergeable(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() && op.getNumReductionLoops() > 0 &&
         !op.hasIndexSemantics() && op->getDiscardableAttrDictionary().empty() &&
         !llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic) &&
         foldsPlainly(op);
}

/// Whether `v` is available at `op`, in whose block or an enclosing one it
/// is defined.
bool availableAt(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  Block *block = def ? def->getBlock() : cast<BlockArgument>(v).getOwner();
  if (block != op->getBlock())
    return block->getParentOp()->isProperAncestor(op);
  return !def || def->isBeforeInBlock(op);
}

/// Whether all that `later` reads, its operands and the values its body
/// takes from outside, is available at `earlier`.
bool readsOnlyBefore(linalg::GenericOp later, linalg::GenericOp earlier) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(later.getRegion(), captured);
  return llvm::all_of(later->getOperands(),
                      [&](Value v) { return availableAt(v, earlier); }) &&
         llvm::all_of(captured, [&](Value v) { return availableAt(v, earlier); });
}

/// Whether `a` and `b` run the same loops and read a tensor in common at the
/// same place.
bool areSiblings(linalg::GenericOp a, linalg::GenericOp b) {
  if (a.getIteratorTypesArray() != b.getIteratorTypesArray() ||
      a.getStaticLoopRanges() != b.getStaticLoopRanges())
    return false;
  for (OpOperand *x : a.getDpsInputOperands())
    for (OpOperand *y : b.getDpsInputOperands())
      if (x->get() == y->get() &&
          a.getMatchingIndexingMap(x) == b.getMatchingIndexingMap(y) &&
          isa<RankedTensorType>(x->get().getType()))
        return true;
  return false;
}

/// `first` and `second` (later in the same block, every operand of it
/// defined before `first`) as one generic in `first`'s place: the inputs of
/// both (a tensor read at the same place by both, once), the outputs of
/// `first` and then of `second`.
linalg::GenericOp merge(linalg::GenericOp first, linalg::GenericOp second,
                        RewriterBase &rewriter) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  // Each original input's position among the merged inputs.
  auto addInputs = [&](linalg::GenericOp op) {
    SmallVector<unsigned> at;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      unsigned i = 0;
      while (i < inputs.size() && !(inputs[i] == input->get() && maps[i] == map))
        ++i;
      if (i == inputs.size()) {
        inputs.push_back(input->get());
        maps.push_back(map);
      }
      at.push_back(i);
    }
    return at;
  };
  SmallVector<unsigned> firstAt = addInputs(first);
  SmallVector<unsigned> secondAt = addInputs(second);
  SmallVector<Value> inits;
  SmallVector<Type> types;
  for (linalg::GenericOp op : {first, second})
    for (OpOperand &init : op.getDpsInitsMutable()) {
      inits.push_back(init.get());
      types.push_back(init.get().getType());
      maps.push_back(op.getMatchingIndexingMap(&init));
    }
  rewriter.setInsertionPoint(first);
  auto merged = linalg::GenericOp::create(rewriter, first.getLoc(), types, inputs, inits,
                                          maps, first.getIteratorTypesArray());
  Block *body = rewriter.createBlock(&merged.getRegion());
  for (Value v : inputs)
    body->addArgument(getElementTypeOrSelf(v.getType()), first.getLoc());
  for (Value v : inits)
    body->addArgument(getElementTypeOrSelf(v.getType()), first.getLoc());
  SmallVector<Value> yields;
  unsigned initOffset = inputs.size();
  for (auto [op, at] : {std::pair(first, &firstAt), std::pair(second, &secondAt)}) {
    Block &old = op.getRegion().front();
    IRMapping map;
    for (auto [i, position] : llvm::enumerate(*at))
      map.map(old.getArgument(i), body->getArgument(position));
    for (unsigned i = 0; i < op.getNumDpsInits(); ++i)
      map.map(old.getArgument(op.getNumDpsInputs() + i),
              body->getArgument(initOffset + i));
    initOffset += op.getNumDpsInits();
    rewriter.setInsertionPointToEnd(body);
    for (Operation &inner : old.without_terminator())
      rewriter.clone(inner, map);
    for (Value v : old.getTerminator()->getOperands())
      yields.push_back(map.lookupOrDefault(v));
  }
  linalg::YieldOp::create(rewriter, first.getLoc(), yields);
  ValueRange results = merged.getResults();
  rewriter.replaceOp(first, results.take_front(first.getNumResults()));
  rewriter.replaceOp(second, results.drop_front(first.getNumResults()));
  return merged;
}

/// Merges, in `block`, each reduction into the first earlier sibling whose
/// place all it reads is available at; a merged generic takes later
/// siblings in turn.
void mergeIn(Block &block, RewriterBase &rewriter) {
  SmallVector<linalg::GenericOp> seen;
  for (Operation &op : llvm::make_early_inc_range(block)) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic || !isMergeable(generic))
      continue;
    auto sibling = llvm::find_if(seen, [&](linalg::GenericOp earlier) {
      return areSiblings(earlier, generic) && readsOnlyBefore(generic, earlier);
    });
    if (sibling == seen.end())
      seen.push_back(generic);
    else
      *sibling = merge(*sibling, generic, rewriter);
  }
}

struct MergeSiblingReductions
    : public impl::MergeSiblingReductionsBase<MergeSiblingReductions> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      mergeIn(*block, rewriter);
  }
};

} // namespace
} // namespace sinter
