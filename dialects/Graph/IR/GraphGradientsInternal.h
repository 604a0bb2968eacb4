//===- GraphGradientsInternal.h - Private to the gradient rules -*- C++ -*-===//
//
// What GraphGradients.cpp, GraphGradientsLinalg.cpp and GraphGradientsNN.cpp
// share: the helpers that build the gradients from graph ops, which
// GraphGradients.cpp defines, and the head of a gradient rule.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_GRAPH_GRAPHGRADIENTSINTERNAL_H
#define SINTER_GRAPH_GRAPHGRADIENTSINTERNAL_H

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/Builders.h"

namespace sinter::graph {

mlir::RankedTensorType typeOf(mlir::Value v);

/// A rank-0 constant of `like`'s element type.
mlir::Value scalar(mlir::OpBuilder &b, mlir::Location loc, double v,
                   mlir::Value like);

/// One graph op each: add, sub, mul, div, neg and compare (by predicate `p`).
mlir::Value add(mlir::OpBuilder &b, mlir::Location l, mlir::Value x,
                mlir::Value y);
mlir::Value sub(mlir::OpBuilder &b, mlir::Location l, mlir::Value x,
                mlir::Value y);
mlir::Value mul(mlir::OpBuilder &b, mlir::Location l, mlir::Value x,
                mlir::Value y);
mlir::Value div(mlir::OpBuilder &b, mlir::Location l, mlir::Value x,
                mlir::Value y);
mlir::Value neg(mlir::OpBuilder &b, mlir::Location l, mlir::Value x);
mlir::Value cmp(mlir::OpBuilder &b, mlir::Location l, mlir::Value x,
                mlir::Value y, llvm::StringRef p);

/// A bool mask as 0/1 of `like`'s element type.
mlir::Value asFloat(mlir::OpBuilder &b, mlir::Location l, mlir::Value mask,
                    mlir::Value like);

/// Sums `g` (of a broadcast result) back to `target`'s shape.
mlir::Value unbroadcast(mlir::OpBuilder &b, mlir::Location loc, mlir::Value g,
                        mlir::Type target);

/// `g` broadcast to `shape` (for gradients of reductions).
mlir::Value broadcastTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value g,
                        mlir::RankedTensorType type);

/// A reduction's result gradient reshaped so it broadcasts against its
/// input: size-1 at every reduced axis.
mlir::Value keepReducedAxes(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value g, mlir::Value input,
                            llvm::ArrayRef<int64_t> axes, bool keepdim);

/// The number of elements of `input` that a reduction over `axes` (all of
/// them when empty) combines.
int64_t countOf(mlir::Value input, llvm::ArrayRef<int64_t> axes);

/// `v` with its last two dimensions swapped (x @ transpose(y)).
mlir::Value swapLast(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v);

} // namespace sinter::graph

/// The head of `OP`'s GradientOpInterface::buildGradients: the result
/// gradients `rg` in, the operand gradients appended to `og`. Each file
/// #undefs it at its end.
#define GRADIENT(OP)                                                           \
  LogicalResult OP::buildGradients(OpBuilder &b, ArrayRef<Value> rg,          \
                                   SmallVectorImpl<Value> &og)

#endif // SINTER_GRAPH_GRAPHGRADIENTSINTERNAL_H
