//===- MergeParallelLoops.cpp - Independent neighbouring nests as one -----===//
//
// Attention's query, key and value are each copied to the layout cuDNN
// reads: three loops over the same space, one after another, none reading
// what another writes. As three kernels, each waits for the one before it
// to drain; as one, the GPU streams all three at once.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/BufferAccesses.h"
#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAMERGEPARALLELLOOPS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

/// Whether `a` and `b` take the same values: one SSA value, or equal
/// constants.
bool sameValue(Value a, Value b) {
  if (a == b)
    return true;
  std::optional<int64_t> x = getConstantIntValue(a), y = getConstantIntValue(b);
  return x && y && *x == *y;
}

/// Whether `a` and `b` run over the same iterations.
bool sameSpace(scf::ParallelOp a, scf::ParallelOp b) {
  auto same = [](ValueRange x, ValueRange y) {
    return x.size() == y.size() && llvm::all_of(llvm::zip(x, y), [](auto pair) {
             return sameValue(std::get<0>(pair), std::get<1>(pair));
           });
  };
  return same(a.getLowerBound(), b.getLowerBound()) &&
         same(a.getUpperBound(), b.getUpperBound()) && same(a.getStep(), b.getStep());
}

/// Whether `loop` is a plain nest: no reductions, a straight-line body.
bool isPlain(scf::ParallelOp loop) {
  return loop.getInitVals().empty() &&
         llvm::all_of(loop.getBody()->without_terminator(),
                      [](Operation &op) { return op.getNumRegions() == 0; });
}

/// The next op after `loop` that touches memory, when it is a plain nest
/// over the same space.
scf::ParallelOp nextOver(scf::ParallelOp loop) {
  for (Operation *op = loop->getNextNode(); op; op = op->getNextNode()) {
    if (isMemoryEffectFree(op))
      continue;
    auto next = dyn_cast<scf::ParallelOp>(op);
    return next && isPlain(next) && sameSpace(loop, next) ? next : scf::ParallelOp();
  }
  return {};
}

/// `first`'s body moved to the start of `second`'s, on its induction
/// variables; `first` erased.
void mergeInto(scf::ParallelOp first, scf::ParallelOp second) {
  IRMapping map;
  map.map(first.getInductionVars(), second.getInductionVars());
  OpBuilder b = OpBuilder::atBlockBegin(second.getBody());
  for (Operation &op : first.getBody()->without_terminator())
    b.clone(op, map);
  first.erase();
}

struct CUDAMergeParallelLoops
    : public impl::CUDAMergeParallelLoopsBase<CUDAMergeParallelLoops> {
  void runOnOperation() override {
    BufferOverlaps overlaps;
    SmallVector<scf::ParallelOp> loops;
    getOperation().walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        loops.push_back(loop);
    });
    // Each loop is met once, before the loop it may merge into.
    for (scf::ParallelOp loop : loops) {
      if (!isPlain(loop))
        continue;
      scf::ParallelOp next = nextOver(loop);
      std::optional<Accesses> mine = accessesOf(loop);
      std::optional<Accesses> theirs = next ? accessesOf(next) : std::nullopt;
      if (!mine || !theirs || !overlaps.independent(*mine, *theirs))
        continue;
      mergeInto(loop, next);
    }
  }
};

} // namespace
} // namespace sinter::cuda
