//===- CollapseInnerDims.cpp - One long inner loop, not several short ones ===//
//
// Inside a thread, a generic's dimensions run as nested loops, and LLVM
// vectorizes only the innermost: over a 4x4 or 32x32 image plane that is
// a loop of 4 or 32 elements, each with a vector prologue and, for a sum,
// a horizontal reduction per row. Where consecutive dimensions are
// contiguous in every operand, they are one dimension: collapsed, the
// plane is one loop of 16 or 1024 elements.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/Passes.h"
#include "compiler/Target/CPU/ThreadedDims.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace sinter::cpu {
#define GEN_PASS_DEF_CPUCOLLAPSEINNERDIMS
#include "compiler/Target/CPU/Passes.h.inc"

namespace {

/// Whether every operand is a buffer whose elements lie in row-major order,
/// read through a projected permutation, so that dimensions contiguous in
/// its indexing map are contiguous in memory too. (The upstream rewrite
/// mishandles maps with constant results, such as a 1x64x1x1 operand's
/// (n, c, h, w) -> (0, c, 0, 0).)
bool collapsible(linalg::GenericOp op) {
  return llvm::all_of(op->getOperands(),
                      [](Value v) {
                        auto type = dyn_cast<MemRefType>(v.getType());
                        return type && type.hasStaticShape() &&
                               type.getLayout().isIdentity();
                      }) &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isProjectedPermutation(); });
}

/// The groups of two or more consecutive dimensions, after those the
/// threads share, that have one iterator type and are contiguous in every
/// indexing map.
SmallVector<ReassociationIndices> collapsibleGroups(linalg::GenericOp op,
                                                    int64_t minParallelIterations) {
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // The threads share leading parallel dimensions (ParallelOuterDims):
  // those stay as they are.
  unsigned leadingParallel = 0;
  while (leadingParallel < iterators.size() &&
         iterators[leadingParallel] == utils::IteratorType::parallel)
    ++leadingParallel;
  unsigned first = leadingParallel == 0
                       ? 0
                       : threadedDims(ArrayRef(trips).take_front(leadingParallel),
                                      minParallelIterations);
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices group;
  auto close = [&] {
    if (group.size() > 1)
      groups.push_back(group);
    group.clear();
  };
  for (unsigned d = first; d < trips.size(); ++d) {
    if (!group.empty()) {
      ReassociationIndices grown = group;
      grown.push_back(d);
      if (iterators[d] == iterators[group.front()] &&
          linalg::areDimSequencesPreserved(maps, {grown})) {
        group = grown;
        continue;
      }
      close();
    }
    group.push_back(d);
  }
  close();
  return groups;
}

struct CPUCollapseInnerDims
    : public impl::CPUCollapseInnerDimsBase<CPUCollapseInnerDims> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics() && collapsible(op) &&
          !ShapedType::isDynamicShape(op.getStaticLoopRanges()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      SmallVector<ReassociationIndices> groups =
          collapsibleGroups(op, minParallelIterations);
      if (groups.empty())
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::CollapseResult> collapsed =
          linalg::collapseOpIterationDims(op, groups, rewriter);
      // The upstream rewrite refuses some forms; those keep their loops.
      if (succeeded(collapsed))
        rewriter.eraseOp(op);
    }
  }
};

} // namespace
} // namespace sinter::cpu
