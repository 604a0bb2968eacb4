//===- ConsumersFollowReductions.cpp - Readers of a reduction next to it ---===//
//
// sinter-cuda-block-reductions runs the loops that read a reduction's
// results in its launch, when the memory plan shows they share no bytes
// with the ops between. Put right after the reduction before the plan is
// made, they never do.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDACONSUMERSFOLLOWREDUCTIONS
#include "compiler/Target/CUDA/Passes.h.inc"
} // namespace sinter::cuda

using namespace mlir;

namespace sinter::cuda {
namespace {

/// The ops after `anchor` in its block that make `op`'s operands (and what
/// its body reads from outside), in block order, when all of them touch
/// no memory and have no regions; nothing otherwise.
std::optional<SmallVector<Operation *>> makersAfter(Operation *op, Operation *anchor) {
  llvm::SetVector<Operation *> makers;
  std::function<bool(Value)> available = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != anchor->getBlock() || !anchor->isBeforeInBlock(def) ||
        makers.contains(def))
      return true;
    if (!isMemoryEffectFree(def) || def->getNumRegions() != 0 ||
        !llvm::all_of(def->getOperands(), available))
      return false;
    makers.insert(def);
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
  SmallVector<Operation *> ordered(makers.begin(), makers.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// Whether every op strictly between `from` and `to` (one block) touches
/// no memory: a call, or a tensor made from a buffer, keeps what follows
/// it after it.
bool onlyPureBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode())
    if (!isMemoryEffectFree(op))
      return false;
  return true;
}

bool isReduction(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() && op.getNumReductionLoops() > 0;
}

bool isAllParallel(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && generic.hasPureTensorSemantics() &&
         generic.getNumLoops() == generic.getNumParallelLoops();
}

struct CUDAConsumersFollowReductions
    : public impl::CUDAConsumersFollowReductionsBase<CUDAConsumersFollowReductions> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> reductions;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isReduction(op))
        reductions.push_back(op);
    });
    for (linalg::GenericOp reduction : reductions) {
      llvm::SetVector<Operation *> readers;
      for (Operation *user : reduction->getUsers())
        if (user->getBlock() == reduction->getBlock() && isAllParallel(user))
          readers.insert(user);
      SmallVector<Operation *> ordered(readers.begin(), readers.end());
      llvm::sort(ordered,
                 [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
      Operation *last = reduction;
      for (Operation *reader : ordered) {
        std::optional<SmallVector<Operation *>> makers = makersAfter(reader, last);
        if (!makers || !onlyPureBetween(last, reader))
          continue;
        for (Operation *maker : *makers) {
          maker->moveAfter(last);
          last = maker;
        }
        reader->moveAfter(last);
        last = reader;
      }
    }
  }
};

} // namespace
} // namespace sinter::cuda
