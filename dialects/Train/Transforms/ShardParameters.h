//===- ShardParameters.h - Parameters gathered before use -------*- C++ -*-===//
//
// FULL_SHARD's half of dist-shard: each rank holds only its shard of every
// parameter, and a step gathers a block's parameters just before the
// forward pass uses them, and again just before the backward pass does.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TRAIN_TRANSFORMS_SHARDPARAMETERS_H
#define SINTER_TRAIN_TRANSFORMS_SHARDPARAMETERS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace sinter::train {

/// The group a parameter is gathered with: its name up to its first index
/// (`h.0` of `h.0.attn.c_attn.weight`, one block of a repeat), else its
/// first component (`wte`, `fc1`).
llvm::StringRef parameterGroup(llvm::StringRef name);

/// Makes every parameter argument of `step` this rank's shard over `world`
/// ranks: s = ceil(n / W) elements of the parameter flattened and padded
/// with zeros, marked with its global shape. Every use outside `keep` (the
/// update, which works on shards; may be null) reads the parameter gathered
/// for it instead: once per group before the forward pass's first use in a
/// block (the step's, or the micro-batch loop's), once before the backward
/// pass's, each group's gather started when the previous one's is waited
/// for.
mlir::LogicalResult shardParameters(mlir::func::FuncOp step, int64_t world,
                                    mlir::Operation *keep);

} // namespace sinter::train

#endif // SINTER_TRAIN_TRANSFORMS_SHARDPARAMETERS_H
