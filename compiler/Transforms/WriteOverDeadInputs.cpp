//===- WriteOverDeadInputs.cpp - Elementwise results over spent inputs ---===//
//
// Cross-entropy's gradient is a loop over the logits that writes one
// element per logit read, of the same type, and nothing reads the logits
// after it: GPT-2 124M's two arrays of [tokens, 50,257] were both live at
// the step's peak. A parallel loop that writes its result where it reads an
// input of the same type and shape, element for element, may write into
// that input's buffer once nothing reads the input after it. The loop's
// result then takes the input as its init, and bufferization writes it in
// place. Readers after the loop that do not depend on it (the loss's pick
// of the target's logit, and the zeros it sums onto) move before it first.
//
// Only a buffer the step makes for itself is reused this way (a product's
// or a loop's, started from a tensor.empty): never a parameter, a state,
// an argument or an accumulator carried by a loop.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_WRITEOVERDEADINPUTS
#include "compiler/Transforms/Passes.h.inc"

namespace {

bool isView(Operation *op) {
  return isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                         tensor::ExtractSliceOp>(op);
}

/// Whether `v` is a fresh buffer: a tensor.empty, a view of one, or what a
/// linalg op wrote into such a buffer (through its init).
bool isFresh(Value v) {
  for (int depth = 0; depth < 64; ++depth) {
    Operation *def = v.getDefiningOp();
    if (isa_and_nonnull<tensor::EmptyOp>(def))
      return true;
    if (isView(def)) {
      v = def->getOperand(0);
    } else if (auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(def);
               linalgOp && linalgOp.hasPureTensorSemantics()) {
      v = linalgOp.getDpsInits()[cast<OpResult>(v).getResultNumber()];
    } else {
      return false;
    }
  }
  return false;
}

/// Every tensor that shares `v`'s buffer once bufferized: the chain of
/// views and inits `v` was made from, and the views made from those.
llvm::SetVector<Value> sharers(Value v) {
  llvm::SetVector<Value> out;
  SmallVector<Value> work = {v};
  while (!work.empty()) {
    Value t = work.pop_back_val();
    if (!out.insert(t))
      continue;
    Operation *def = t.getDefiningOp();
    if (isView(def))
      work.push_back(def->getOperand(0));
    else if (auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(def))
      work.push_back(linalgOp.getDpsInits()[cast<OpResult>(t).getResultNumber()]);
    for (Operation *user : t.getUsers())
      if (isView(user) && user->getOperand(0) == t)
        work.push_back(user->getResult(0));
  }
  return out;
}

/// Adds `op`, an op of `loop`'s block after it, and the ops after `loop`
/// it reads from, to `moved`: false when one of them is not pure or reads
/// `loop`'s result.
bool movable(Operation *op, linalg::GenericOp loop, DominanceInfo &dominance,
             llvm::SetVector<Operation *> &moved) {
  if (moved.contains(op))
    return true;
  if (op == loop.getOperation() || !isMemoryEffectFree(op) || op->getNumResults() == 0)
    return false;
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(op->getRegions(), used);
  used.insert(op->operand_begin(), op->operand_end());
  moved.insert(op);
  for (Value u : used) {
    if (dominance.properlyDominates(u, loop))
      continue;
    Operation *def = u.getDefiningOp();
    Operation *at = def ? loop->getBlock()->findAncestorOpInBlock(*def) : nullptr;
    if (!at || !movable(at, loop, dominance, moved))
      return false;
  }
  return true;
}

/// The ops of `loop`'s block that read `x`'s buffer after `loop`, with
/// what they read that is made after it, to move before it; none when
/// nothing does. False when one cannot move.
bool laterReaders(Value x, linalg::GenericOp loop, DominanceInfo &dominance,
                  llvm::SetVector<Operation *> &readers) {
  Block *block = loop->getBlock();
  llvm::SetVector<Value> shared = sharers(x);
  for (Value t : shared) {
    for (Operation *user : t.getUsers()) {
      if (isView(user) && shared.contains(user->getResult(0)))
        continue;
      Operation *at = block->findAncestorOpInBlock(*user);
      if (!at)
        return false;
      if (at == loop.getOperation() || at->isBeforeInBlock(loop))
        continue;
      if (!movable(at, loop, dominance, readers))
        return false;
    }
  }
  return true;
}

struct WriteOverDeadInputs : impl::WriteOverDeadInputsBase<WriteOverDeadInputs> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> loops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics() && op.getNumResults() == 1 &&
          op.getNumLoops() == op.getNumParallelLoops() &&
          !op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)) &&
          isFresh(op.getDpsInits()[0]))
        loops.push_back(op);
    });
    for (linalg::GenericOp loop : loops) {
      DominanceInfo dominance(loop->getParentOp());
      OpOperand *init = loop.getDpsInitOperand(0);
      AffineMap written = loop.getMatchingIndexingMap(init);
      if (!written.isPermutation())
        continue;
      for (OpOperand *input : loop.getDpsInputOperands()) {
        Value x = input->get();
        llvm::SetVector<Operation *> readers;
        if (x.getType() != init->get().getType() ||
            loop.getMatchingIndexingMap(input) != written || !x.getDefiningOp() ||
            !isFresh(x) || !laterReaders(x, loop, dominance, readers))
          continue;
        // In their order, so that one that reads another stays after it.
        SmallVector<Operation *> ordered(readers.begin(), readers.end());
        llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
        for (Operation *reader : ordered)
          reader->moveBefore(loop);
        init->set(x);
        break;
      }
    }
  }
};

} // namespace
} // namespace sinter
