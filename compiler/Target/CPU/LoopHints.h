//===- LoopHints.h - What LLVM is told about a loop -------------*- C++ -*-===//
#ifndef SINTER_TARGET_CPU_LOOPHINTS_H
#define SINTER_TARGET_CPU_LOOPHINTS_H

namespace mlir::scf {
class ForOp;
} // namespace mlir::scf

namespace sinter::cpu {

/// Asks LLVM not to unroll `loop` (llvm.loop.unroll.disable, carried by
/// scf-to-cf onto its back edge). LLVM unrolls a short loop whole and would
/// then vectorize the loop around it, across rows, with gathers; kept a
/// loop, it is vectorized along memory.
void keepRolled(mlir::scf::ForOp loop);

} // namespace sinter::cpu

#endif // SINTER_TARGET_CPU_LOOPHINTS_H
