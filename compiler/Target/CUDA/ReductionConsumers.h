//===- ReductionConsumers.h - Loops that run in a reduction's launch -*- C++ -*-===//
//
// A block reduction's results are often read right away: a layer norm's
// sums become its mean and reciprocal square root, one per row, and those
// normalize the row; a softmax's maximum and sum become the gradient of
// its row's logits. Each of these loops would be a launch of its own that
// reads back what the block just held. Here, for a reduction that
// sinter-cuda-block-reductions gives a block per row, are the loops after
// it that can run in its launch instead, and what they read there.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TARGET_CUDA_REDUCTIONCONSUMERS_H
#define SINTER_TARGET_CUDA_REDUCTIONCONSUMERS_H

#include "compiler/Target/CUDA/BufferAccesses.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace sinter::cuda {

/// Where a consumer's loop runs in the reduction's launch: with one of its
/// parallel loops (the block's row index), at index 0 (a loop of range 1),
/// or with one of its reduced loops (the element a thread walks to).
struct LoopPlace {
  enum Kind { Parallel, Unit, Reduced } kind;
  int64_t loop = 0; ///< which parallel or reduced loop
  bool operator==(const LoopPlace &o) const { return kind == o.kind && loop == o.loop; }
};

/// Where a block reduction's own loops (`loops` of them, the first
/// `parallel` parallel) run in its launch: the parallel ones with the
/// block's row, the reduced ones with a thread's element.
llvm::SmallVector<LoopPlace> reductionPlaces(unsigned loops, unsigned parallel);

/// A per-row value in memory: a buffer, and for each of its indices the
/// reduction's parallel loop it follows (-1: index 0).
using RowSlot = std::pair<mlir::Value, llvm::SmallVector<int64_t>>;

/// Where `map`, over loops placed as `loops` says, reads a per-row value:
/// for each result, the parallel loop it follows or -1 for index 0.
/// Nothing when a result follows a reduced loop or is another expression.
std::optional<llvm::SmallVector<int64_t>> rowIndex(mlir::AffineMap map,
                                                   llvm::ArrayRef<LoopPlace> loops);

/// The ops after `anchor` in its block that make what `op` (and its body)
/// reads from outside, in block order, when they can all move to just
/// after `anchor`: ops that touch no memory and hold no regions (views,
/// constants, empty tensors, arithmetic), whose own operands can too.
/// Nothing otherwise. What `anchor` itself defines is available.
std::optional<llvm::SmallVector<mlir::Operation *>>
definitionsAfter(mlir::Operation *op, mlir::Operation *anchor);

/// A loop that runs in a block reduction's launch.
struct ReductionConsumer {
  mlir::linalg::GenericOp op;
  /// Where each of its loops runs. A loop with reduced places runs over
  /// the row, each thread at the elements it folded; one without, once per
  /// row, after the block's totals.
  llvm::SmallVector<LoopPlace> loops;
  /// What it reads that is defined after the reduction (its buffers'
  /// views, constants), to move before it.
  llvm::SmallVector<mlir::Operation *> hoisted;
  bool perElement() const {
    return llvm::any_of(loops, [](LoopPlace p) { return p.kind == LoopPlace::Reduced; });
  }
};

/// The loops after `reduction` (parallel loops, then reduced ones of
/// `ranges`) that read its folded outputs `folded`, or what such loops
/// write, and can run in its launch, in their order. Each is all parallel
/// over static buffers and runs either once per row (its loops, unit ones
/// aside, are the parallel ones: a mean from a sum) or once per element
/// (its loops are the reduction's: a normalized row), reading per-row
/// values at their row, the reduction's stored outputs where it stored
/// them, and buffers it does not write anywhere; each writes every row's
/// own elements, and shares no byte with the reduction or with the ops it
/// would then run before (at most kLookPast of them looked past).
llvm::SmallVector<ReductionConsumer> consumersOf(mlir::linalg::GenericOp reduction,
                                                 llvm::ArrayRef<mlir::OpOperand *> folded,
                                                 llvm::ArrayRef<mlir::OpOperand *> stored,
                                                 BufferOverlaps &overlaps);

} // namespace sinter::cuda

#endif // SINTER_TARGET_CUDA_REDUCTIONCONSUMERS_H
