//===- SplitLargeFunctions.h - No giant function reaches LLVM -----*- C++ -*-===//
#ifndef SINTER_TARGET_HOST_SPLITLARGEFUNCTIONS_H
#define SINTER_TARGET_HOST_SPLITLARGEFUNCTIONS_H

namespace llvm {
class Module;
} // namespace llvm

namespace sinter::host {

/// Moves the straight-line code of every function longer than
/// `maxInstructions` into functions of at most about that many instructions,
/// called in order. A step is a long sequence of kernel calls (hundreds per
/// layer); as one function, register allocation grows faster than its length
/// and one thread compiles it alone.
void splitLargeFunctions(llvm::Module &module, unsigned maxInstructions);

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_SPLITLARGEFUNCTIONS_H
