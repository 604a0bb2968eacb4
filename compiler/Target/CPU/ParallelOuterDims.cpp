//===- ParallelOuterDims.cpp - Threads over outer dims, vectors inner -----===//
//
// OpenMP runs a loop nest of several parallel dimensions as one collapsed
// loop and recovers each index from the flat one with a division per
// element, so the innermost loop, contiguous in memory, never vectorizes.
// Threads need only enough outer iterations to share; the dimensions
// inside those become sequential loops that LLVM vectorizes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/LoopHints.h"
#include "compiler/Target/CPU/Passes.h"
#include "compiler/Target/CPU/ThreadedDims.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace sinter::cpu {
#define GEN_PASS_DEF_CPUPARALLELOUTERDIMS
#include "compiler/Target/CPU/Passes.h.inc"

namespace {

/// The trip count of dimension `d` of `loop`, if its bounds are constants.
std::optional<int64_t> tripCount(scf::ParallelOp loop, unsigned d) {
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[d]);
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[d]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[d]);
  if (!lb || !ub || !step || *step <= 0)
    return std::nullopt;
  return *ub > *lb ? (*ub - *lb + *step - 1) / *step : 0;
}

/// How many leading dimensions of `loop` stay parallel: those the threads
/// share (ThreadedDims.h), or all of them when a bound is unknown.
unsigned parallelDims(scf::ParallelOp loop, int64_t enough) {
  SmallVector<int64_t> trips;
  for (unsigned d = 0; d < loop.getNumLoops(); ++d) {
    std::optional<int64_t> t = tripCount(loop, d);
    if (!t)
      return loop.getNumLoops(); // unknown: leave the loop as it is
    trips.push_back(*t);
  }
  return threadedDims(trips, enough);
}

/// The iterations of `loop`'s whole nest: its own dimensions' times the
/// deepest chain of constant-bound `scf.for`s inside (a reduction's rows);
/// nullopt when a bound is unknown.
std::optional<int64_t> nestIterations(scf::ParallelOp loop) {
  int64_t own = 1;
  for (unsigned d = 0; d < loop.getNumLoops(); ++d) {
    std::optional<int64_t> t = tripCount(loop, d);
    if (!t)
      return std::nullopt;
    own *= *t;
  }
  // Each scf.for's trips times those of the scf.fors around it, up to
  // `loop`; one without a constant trip count makes the whole unknown.
  std::optional<int64_t> inner = 1;
  loop.getBody()->walk([&](scf::ForOp f) {
    int64_t chain = 1;
    for (Operation *p = f; p != loop && inner; p = p->getParentOp())
      if (auto each = dyn_cast<scf::ForOp>(p)) {
        std::optional<APInt> trips = each.getStaticTripCount();
        if (!trips)
          inner = std::nullopt;
        else
          chain *= trips->getSExtValue();
      }
    if (inner)
      inner = std::max(*inner, chain);
  });
  if (!inner)
    return std::nullopt;
  return own * *inner;
}

/// scf.parallel (i0..in) { body } becomes
/// scf.parallel (i0..ik-1) { scf.for ik { ... scf.for in { body } } }, or
/// with k = 0 the loops alone.
void keepOuterParallel(scf::ParallelOp loop, unsigned kept) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  IRMapping mapping;
  if (kept > 0) {
    auto outer = scf::ParallelOp::create(b, loc, loop.getLowerBound().take_front(kept),
                                         loop.getUpperBound().take_front(kept),
                                         loop.getStep().take_front(kept));
    for (unsigned d = 0; d < kept; ++d)
      mapping.map(loop.getInductionVars()[d], outer.getInductionVars()[d]);
    b.setInsertionPointToStart(outer.getBody());
  }
  for (unsigned d = kept; d < loop.getNumLoops(); ++d) {
    auto inner = scf::ForOp::create(b, loc, loop.getLowerBound()[d],
                                    loop.getUpperBound()[d], loop.getStep()[d]);
    keepRolled(inner);
    mapping.map(loop.getInductionVars()[d], inner.getInductionVar());
    b.setInsertionPointToStart(inner.getBody());
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  loop.erase();
}

struct CPUParallelOuterDims
    : public impl::CPUParallelOuterDimsBase<CPUParallelOuterDims> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops, nested;
    getOperation().walk([&](scf::ParallelOp loop) {
      // Loops with reductions keep their form (scf.reduce combines across
      // every dimension). Nested ones (a partial row's loop inside a
      // reduction) run inside a thread already: they become sequential
      // loops, innermost first, instead of OpenMP regions of one thread.
      if (loop.getNumResults() != 0)
        return;
      (loop->getParentOfType<scf::ParallelOp>() ? nested : loops).push_back(loop);
    });
    for (scf::ParallelOp loop : nested)
      keepOuterParallel(loop, 0);
    for (scf::ParallelOp loop : loops) {
      // A small nest (a per-channel map, the last sum of a split
      // reduction's partial rows) costs less than waking the threads.
      std::optional<int64_t> work = nestIterations(loop);
      if (work && *work < minParallelWork) {
        keepOuterParallel(loop, 0);
        continue;
      }
      unsigned kept = parallelDims(loop, minParallelIterations);
      if (kept < loop.getNumLoops())
        keepOuterParallel(loop, kept);
    }
  }
};

} // namespace
} // namespace sinter::cpu
