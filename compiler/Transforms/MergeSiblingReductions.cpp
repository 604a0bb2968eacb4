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

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace sinter {
#define GEN_PASS_DEF_MERGESIBLINGREDUCTIONS
#include "compiler/Transforms/Passes.h.inc"
} // namespace sinter

using namespace mlir;

namespace sinter {
namespace {

/// Whether `op` is a reduction this pass merges: on tensors of static
/// shapes, with a reduced loop, and no index of its loops in its body (a
/// merged body keeps its loops, but one rule is simpler to trust).
bool isMergeable(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() && op.getNumReductionLoops() > 0 &&
         !op.hasIndexSemantics() &&
         !llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic);
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
void merge(linalg::GenericOp first, linalg::GenericOp second, RewriterBase &rewriter) {
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
}

/// Merges, in `block`, each reduction into the first earlier sibling whose
/// place its operands are all available at. Whether anything merged.
bool mergeIn(Block &block, DominanceInfo &dominance, RewriterBase &rewriter) {
  SmallVector<linalg::GenericOp> seen;
  for (Operation &op : block) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    if (!generic || !isMergeable(generic))
      continue;
    for (linalg::GenericOp earlier : seen) {
      if (!areSiblings(earlier, generic) ||
          !llvm::all_of(generic->getOperands(),
                        [&](Value v) { return dominance.properlyDominates(v, earlier); }))
        continue;
      merge(earlier, generic, rewriter);
      return true;
    }
    seen.push_back(generic);
  }
  return false;
}

struct MergeSiblingReductions
    : public impl::MergeSiblingReductionsBase<MergeSiblingReductions> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks) {
      // A merge invalidates the walk; each restarts, and each removes an op.
      DominanceInfo dominance(getOperation());
      while (mergeIn(*block, dominance, rewriter))
        dominance = DominanceInfo(getOperation());
    }
  }
};

} // namespace
} // namespace sinter
