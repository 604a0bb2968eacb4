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

/// The folds of `op`'s outputs, when each output is a plain fold: the
/// yielded value is one combiner (add, mul, max, min) of the accumulator,
/// used nowhere else, and a value of the inputs alone.
std::optional<llvm::SmallVector<Fold>> foldsOf(mlir::linalg::GenericOp op);

/// Whether `op` reduces along columns: it has parallel and reduced loops,
/// every input that moves with a reduced loop has no reduced loop in its
/// last (fastest) index, and one has a parallel loop there. A thread per
/// output then reads what its neighbours read beside it, or the same
/// element (a row's mean), one row after another.
bool isColumnReduction(mlir::linalg::GenericOp op);

} // namespace sinter::cuda

#endif // SINTER_TARGET_CUDA_REDUCTIONS_H
