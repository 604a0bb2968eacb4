//===- ConsumersFollowReductions.cpp - Readers of a reduction next to it ---===//
//
// sinter-cuda-block-reductions runs the loops that read a reduction's
// results in its launch, when the memory plan shows they share no bytes
// with the ops between. Put right after the reduction before the plan is
// made, they never do.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/Passes.h"
#include "compiler/Target/CUDA/ReductionConsumers.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDACONSUMERSFOLLOWREDUCTIONS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

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
        std::optional<SmallVector<Operation *>> makers = definitionsAfter(reader, last);
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
