//===- GraphOpsInternal.h - Private to the graph ops ------------*- C++ -*-===//
//
// What GraphOps.cpp and GraphTypeInference.cpp share: the result type
// inference of the families of ops. GraphOps.td's families call these
// helpers from the op definitions generated into GraphOps.cpp, and
// Pool2dGradOp's verifier reuses the pooling's; GraphTypeInference.cpp
// defines them. Each reports its error at `loc`, when there is one, as an
// error of the op `opName`, and otherwise appends the result type to `types`.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_GRAPH_GRAPHOPSINTERNAL_H
#define SINTER_GRAPH_GRAPHOPSINTERNAL_H

#include "dialects/Graph/IR/GraphOps.h"

#include <optional>

namespace sinter::graph {

/// Binary elementwise ops: the broadcast shape, with `resultElementType` or
/// else the operands' element type.
mlir::LogicalResult inferBroadcast(std::optional<mlir::Location> loc,
                                   llvm::StringRef opName, mlir::Value lhs,
                                   mlir::Value rhs,
                                   mlir::Type resultElementType,
                                   llvm::SmallVectorImpl<mlir::Type> &types);

/// Reductions over `axes`.
mlir::LogicalResult inferReduce(std::optional<mlir::Location> loc,
                                llvm::StringRef opName, mlir::Value input,
                                llvm::ArrayRef<int64_t> axes, bool keepdim,
                                llvm::SmallVectorImpl<mlir::Type> &types);

/// softmax and log_softmax along `axis`.
mlir::LogicalResult inferSoftmax(std::optional<mlir::Location> loc,
                                 llvm::StringRef opName, mlir::Value input,
                                 int64_t axis,
                                 llvm::SmallVectorImpl<mlir::Type> &types);

/// max_pool2d and avg_pool2d: (height, width) pairs of kernel, stride and
/// padding; an NHWC input and result with `channelsLast`.
mlir::LogicalResult inferPool2d(std::optional<mlir::Location> loc,
                                llvm::StringRef opName, mlir::Value input,
                                llvm::ArrayRef<int64_t> kernel,
                                llvm::ArrayRef<int64_t> stride,
                                llvm::ArrayRef<int64_t> padding, bool channelsLast,
                                llvm::SmallVectorImpl<mlir::Type> &types);

/// mse_loss, l1_loss and bce_with_logits: two tensors of one shape.
mlir::LogicalResult inferPairLoss(std::optional<mlir::Location> loc,
                                  llvm::StringRef opName, mlir::Value lhs,
                                  mlir::Value rhs, llvm::StringRef reduction,
                                  llvm::SmallVectorImpl<mlir::Type> &types);

} // namespace sinter::graph

#endif // SINTER_GRAPH_GRAPHOPSINTERNAL_H
