//===- ArgumentSlots.h - Values in the runtime's 8-byte slots ---*- C++ -*-===//
//
// The runtime's CUDA calls take a kernel's arguments, and a graph region's
// signature, as 8-byte slots: a buffer's device pointer, an index or a
// scalar in a slot's low bytes.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TARGET_CUDA_ARGUMENTSLOTS_H
#define SINTER_TARGET_CUDA_ARGUMENTSLOTS_H

#include "mlir/IR/Builders.h"

namespace sinter::cuda {

/// `v` as an i64 slot: a memref's aligned pointer, a pointer, an index, an
/// integer of at most 64 bits zero-extended, a float's bits. Fails for
/// other types.
mlir::FailureOr<mlir::Value> asSlot(mlir::OpBuilder &b, mlir::Location loc,
                                    mlir::Value v);

/// A stack array of `count` slots in `function`'s entry block, reused by
/// every call that fills it: a call in a loop does not grow the stack.
mlir::Value slotArray(mlir::Operation *function, int64_t count);

} // namespace sinter::cuda

#endif // SINTER_TARGET_CUDA_ARGUMENTSLOTS_H
