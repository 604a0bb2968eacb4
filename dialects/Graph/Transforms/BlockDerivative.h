//===- BlockDerivative.h - A repeated block's forward and backward pair ---===//
//
// Private to graph-autodiff. A block that every layer calls is
// differentiated once, into two functions the layers call in turn:
//
//   @F.fwd(args) -> (results, saved activations)
//   @F.bwd(saved, gradients of results) -> gradients of arguments
//
// `saved` lists what the backward pass reads: arguments of the call and
// results of the forward one (the activations a layer keeps until its
// backward pass, as an unrolled program would). Data movement (reshapes,
// transposes, slices, constants) and cheap elementwise arithmetic (adds,
// products, ReLU) that the forward pass fuses away are recomputed in the
// backward function rather than kept, when that keeps no more memory. A
// block marked `sinter.recompute` recomputes more (Recompute below).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_GRAPH_TRANSFORMS_BLOCKDERIVATIVE_H
#define SINTER_GRAPH_TRANSFORMS_BLOCKDERIVATIVE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace sinter::graph {

/// What the backward function computes again rather than reads from the
/// forward one.
enum class Recompute {
  Cheap,     ///< data movement, and fused arithmetic that saves no memory
  Selective, ///< all but matmuls, convolutions and attention
  Full,      ///< all: only the block's arguments and results are read
};

struct BlockDerivative {
  mlir::func::FuncOp forward, backward;
  /// The results whose gradients the backward function takes, in order.
  llvm::SmallVector<unsigned> seeded;
  /// The arguments whose gradients it returns, in order.
  llvm::SmallVector<unsigned> differentiated;
  /// The backward function's leading operands: an argument of the call
  /// (`fromArgument`) or a result of the forward call, by index.
  struct Saved {
    bool fromArgument;
    unsigned index;
  };
  llvm::SmallVector<Saved> saved;
};

/// Builds `block`'s forward and backward functions beside it, for the
/// gradients of results `seeded` with respect to arguments `differentiated`
/// (both in increasing order).
mlir::FailureOr<BlockDerivative>
differentiateBlock(mlir::func::FuncOp block, llvm::ArrayRef<unsigned> seeded,
                   llvm::ArrayRef<unsigned> differentiated,
                   mlir::SymbolTable &symbols);

} // namespace sinter::graph

#endif // SINTER_GRAPH_TRANSFORMS_BLOCKDERIVATIVE_H
