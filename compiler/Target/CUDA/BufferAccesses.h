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

#include "mlir/IR/Operation.h"
#include "llvm/ADT/SetVector.h"

#include <optional>

namespace sinter::cuda {

/// Whether buffers `a` and `b` provably share no byte: views of one buffer
/// at constant byte ranges that do not meet, or views of distinct
/// allocations (a `memref.alloc`; a function's `sinter.workspace` argument
/// and its other arguments).
bool provablyDisjoint(mlir::Value a, mlir::Value b);

/// The buffers an op reads and writes.
struct Accesses {
  llvm::SetVector<mlir::Value> reads, writes;
};

/// What `op` reads and writes when that is known: a linalg op's inputs
/// (read) and outputs (read and written), and the buffers from outside
/// that loads and stores in its body touch. Nothing when it may touch
/// memory otherwise.
std::optional<Accesses> accessesOf(mlir::Operation *op);

/// Whether `first`'s writes miss everything `second` touches, and
/// `second`'s writes miss everything `first` touches: the two may run in
/// either order, or at once.
bool independent(const Accesses &first, const Accesses &second);

} // namespace sinter::cuda

#endif // SINTER_TARGET_CUDA_BUFFERACCESSES_H
