//===- Backpropagate.h - Reverse accumulation over a block of graph ops ---===//
//
// Private to graph-autodiff: the analyses and the reverse sweep that the
// model and each block it calls share.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_GRAPH_TRANSFORMS_BACKPROPAGATE_H
#define SINTER_GRAPH_TRANSFORMS_BACKPROPAGATE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace sinter::graph {

bool isFloatTensor(mlir::Value v);

/// A tensor of `type` filled with zeros.
mlir::Value zerosLike(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type);

/// For each result of a function called by the model, the arguments it
/// depends on; computed once per function.
class Dependences {
public:
  explicit Dependences(mlir::ModuleOp module) : module(module) {}
  llvm::ArrayRef<llvm::BitVector> of(mlir::func::CallOp call);
  llvm::ArrayRef<llvm::BitVector> of(mlir::func::FuncOp function);

private:
  mlir::ModuleOp module;
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<llvm::BitVector>> cache;
};

/// The float tensors that `ops` (in program order) compute from `seeds`,
/// the seeds included; a call's result depends on the arguments that
/// `deps` says it does.
llvm::DenseSet<mlir::Value> activeValues(llvm::ArrayRef<mlir::Operation *> ops,
                                         llvm::ArrayRef<mlir::Value> seeds,
                                         Dependences &deps);

/// The gradient of a call's operands from its results' gradients (null for
/// those the loss does not reach), built at the builder's insertion point.
using CallGradients = llvm::function_ref<mlir::LogicalResult(
    mlir::func::CallOp call, llvm::ArrayRef<mlir::Value> resultGrads,
    llvm::SmallVectorImpl<mlir::Value> &operandGrads, mlir::OpBuilder &b)>;

/// Reverse accumulation through `ops` (in program order) from the gradients
/// `grads` holds: every active operand of an op with a result gradient gets
/// its share, through the op's GradientOpInterface or `callGradients`. The
/// new ops go at `b`'s insertion point.
mlir::LogicalResult backpropagate(llvm::ArrayRef<mlir::Operation *> ops,
                                  const llvm::DenseSet<mlir::Value> &active,
                                  llvm::DenseMap<mlir::Value, mlir::Value> &grads,
                                  mlir::OpBuilder &b,
                                  CallGradients callGradients);

} // namespace sinter::graph

#endif // SINTER_GRAPH_TRANSFORMS_BACKPROPAGATE_H
