//===- MemoryOpBefore.h - The last op that touched memory -------*- C++ -*-===//
#ifndef SINTER_TARGET_HOST_MEMORYOPBEFORE_H
#define SINTER_TARGET_HOST_MEMORYOPBEFORE_H

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace sinter::host {

/// The op just before `op` that touches memory, past those that touch none
/// (views, allocations, constants): when it writes `op`'s output, nothing
/// but `op` reads what it wrote. An op that does not say what it touches
/// counts as touching memory.
inline mlir::Operation *memoryOpBefore(mlir::Operation *op) {
  for (mlir::Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto effects = llvm::dyn_cast<mlir::MemoryEffectOpInterface>(prev);
    if (!effects || effects.hasEffect<mlir::MemoryEffects::Read>() ||
        effects.hasEffect<mlir::MemoryEffects::Write>() ||
        effects.hasEffect<mlir::MemoryEffects::Free>())
      return prev;
  }
  return nullptr;
}

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_MEMORYOPBEFORE_H
