//===- RegisterAccumulators.h - Sums carried in registers, not memory ----===//
#ifndef SINTER_TARGET_HOST_REGISTERACCUMULATORS_H
#define SINTER_TARGET_HOST_REGISTERACCUMULATORS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace sinter::host {

/// In each of `loops`, given innermost first: for each `memref.store` in the
/// loop body's block that is the loop's only write to its buffer, when the
/// loop's only read of that buffer is one `memref.load` of the same indices
/// before it, the buffer and the indices defined outside the loop (a
/// reduction made into loops, reading and writing its output element on
/// every iteration), the element is loaded once before the loop, carried as
/// an iter_arg, and stored once after. Innermost first, a nest carries the
/// sum all the way out. The loop's other loads and stores use other
/// buffers: bufferization gives each output of a loop a buffer of its own,
/// which the memory plan keeps apart from its inputs and other outputs. `carried` is told each new loop, its carried value and the value
/// it yields for it.
void carryAccumulators(
    llvm::ArrayRef<mlir::scf::ForOp> loops,
    llvm::function_ref<void(mlir::scf::ForOp, mlir::BlockArgument, mlir::Value)> carried);

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_REGISTERACCUMULATORS_H
