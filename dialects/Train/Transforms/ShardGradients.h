//===- ShardGradients.h - Gradients reduce-scattered by bucket --*- C++ -*-===//
//
// ZERO2's half of dist-shard: every micro-batch's gradients of a bucket are
// packed into rows, one per rank, and reduce-scattered, so each rank
// accumulates and keeps only its slice of the summed gradients.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TRAIN_TRANSFORMS_SHARDGRADIENTS_H
#define SINTER_TRAIN_TRANSFORMS_SHARDGRADIENTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace sinter::train {

/// `v` as one dimension (a scalar becomes one element), and back
/// (Shard.cpp).
mlir::Value flatten(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);
mlir::Value unflatten(mlir::OpBuilder &b, mlir::Location loc, mlir::Value flat,
                      mlir::RankedTensorType type);

/// Rewrites the gradient sums of `step` (after dist-bucket and
/// train-build-step) into per-bucket reduce-scatters over `world` ranks.
/// Afterwards the step returns no gradients, its global norm is the norm
/// over every rank's slices, and `slices` maps each parameter's name to this
/// rank's slice of its summed gradient: s = ceil(n / W) elements of the
/// gradient flattened and padded with zeros to W * s.
mlir::LogicalResult
shardGradients(mlir::func::FuncOp step, int64_t world,
               llvm::DenseMap<mlir::StringAttr, mlir::Value> &slices);

} // namespace sinter::train

#endif // SINTER_TRAIN_TRANSFORMS_SHARDGRADIENTS_H
