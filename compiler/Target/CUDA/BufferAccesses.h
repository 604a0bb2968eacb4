//===- BufferAccesses.h - Which buffers an op touches, and overlaps -*- C++ -*-===//
//
// After the memory plan, two tensors are often views of one arena, and a
// buffer dead after one op may hold the next op's result. Before a pass
// moves work of one op into another's kernel, it asks here whether the two
// touch the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TARGET_CUDA_BUFFERACCESSES_H
#define SINTER_TARGET_CUDA_BUFFERACCESSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace sinter::cuda {

/// The buffers an op reads and writes.
struct Accesses {
  llvm::SetVector<mlir::Value> reads, writes;
};

/// What `op`, a linalg op or an `scf.parallel`, reads and writes when that
/// is known: a linalg op's inputs (read) and outputs (read and written),
/// and the buffers from outside that loads and stores in its body touch.
/// Nothing when it may touch memory otherwise.
std::optional<Accesses> accessesOf(mlir::Operation *op);

/// Which buffers can share bytes, in one module.
class BufferOverlaps {
public:
  /// Whether buffers `a` and `b` provably share no byte: views of one
  /// buffer at constant byte ranges that do not meet, or views of distinct
  /// buffers: an allocation (`memref.alloc`) and anything else; a
  /// function's `sinter.workspace` argument and its other arguments; an
  /// argument the function writes and its other arguments (the caller gives
  /// a result, or a buffer updated in place, bytes of its own: all the
  /// call's arguments are live at the call).
  bool disjoint(mlir::Value a, mlir::Value b);

  /// Whether `first`'s writes miss everything `second` touches, and
  /// `second`'s writes miss everything `first` touches: the two may run in
  /// either order, or at once.
  bool independent(const Accesses &first, const Accesses &second);

private:
  /// Whether `root`, an argument of a function, is one the function writes
  /// (a linalg op's output, a store), into it or a view of it, and, for a
  /// private function, one that every call gives bytes of its own.
  bool isWrittenArgument(mlir::Value root);
  /// Whether each call of `function` gives its argument number `argument`
  /// bytes that none of the call's other buffers share.
  bool givenOwnBytes(mlir::func::FuncOp function, unsigned argument);

  /// For each function asked about, the arguments it writes.
  llvm::DenseMap<mlir::Operation *, llvm::DenseSet<mlir::Value>> written;
};

} // namespace sinter::cuda

#endif // SINTER_TARGET_CUDA_BUFFERACCESSES_H
