//===- Reductions.h - Shapes of linalg reductions the CUDA target maps ----===//
//
// What the CUDA target's reduction passes ask of a `linalg.generic`: how
// each output folds its values in (the combiner and its identity), and
// whether neighbouring outputs read neighbouring elements.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TARGET_CUDA_REDUCTIONS_H
#define SINTER_TARGET_CUDA_REDUCTIONS_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>
#include <utility>

namespace sinter::cuda {

/// How one output of a reduction folds: its combiner (the payload op that
/// folds a value into the accumulator), which of the combiner's operands is
/// the accumulator, and the matching all-reduce.
struct Fold {
  mlir::Operation *combiner;
  unsigned accumulatorOperand;
  mlir::gpu::AllReduceOperation kind;
};

/// A column reduction with at least this many outputs runs a thread per
/// output: each warp then reads a row's neighbouring elements together,
/// where a block per output would read down a column, a sector per element.
inline constexpr int64_t kThreadPerOutputColumns = 8192;

/// Below this many reduced elements per output, a thread per output is as
/// good as a block: a warp's shuffles would cost what the loop saves.
inline constexpr int64_t kMinReducedElements = 32;

/// When `op` has reduced loops and all its parallel loops come before them
/// (a reduction a thread or a block per output can walk), the product of
/// the parallel loops' static ranges and of the reduced ones'.
std::optional<std::pair<int64_t, int64_t>>
parallelThenReduced(mlir::linalg::GenericOp op);

/// Whether output `init` of `op` is stored, not folded: `op` writes each of
/// its elements once (its map is a permutation of all the loops) and the
/// body never reads it. (That the value written does not depend on a
/// folded output's running value, foldsOf's one-use checks of each
/// accumulator and combiner ensure.) Fusing a producer whose values other
/// ops read into a reduction makes one (the reduction writes them as it
/// reads them).
bool isStoredOutput(mlir::linalg::GenericOp op, mlir::OpOperand &init);

/// The folds of `op`'s outputs, when each output is a plain fold: the
/// yielded value is one combiner (add, mul, max, min) of the accumulator,
/// used nowhere else, and a value of the inputs alone. With `stored`, the
/// stored outputs (isStoredOutput) are left out of the folds and their
/// numbers among the outputs listed there; without it, they are not folds.
std::optional<llvm::SmallVector<Fold>>
foldsOf(mlir::linalg::GenericOp op, llvm::SmallVectorImpl<unsigned> *stored = nullptr);

/// Whether `op` reduces along columns: it has parallel and reduced loops,
/// every input that moves with a reduced loop and with a parallel one has
/// no reduced loop in its last (fastest) index, and one has a parallel loop
/// there. (An input that moves with reduced loops alone, a row's mean, is
/// one element for all the outputs a warp computes.) A thread per
/// output then reads what its neighbours read beside it, or the same
/// element (a row's mean), one row after another.
bool isColumnReduction(mlir::linalg::GenericOp op);

} // namespace sinter::cuda

#endif // SINTER_TARGET_CUDA_REDUCTIONS_H
