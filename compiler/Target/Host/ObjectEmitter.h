//===- ObjectEmitter.h - LLVM IR to a native object file ---------*- C++ -*-===//
#ifndef SINTER_TARGET_HOST_OBJECTEMITTER_H
#define SINTER_TARGET_HOST_OBJECTEMITTER_H

#include "llvm/Support/Error.h"

#include <memory>

namespace llvm {
class LLVMContext;
class Module;
class raw_pwrite_stream;
} // namespace llvm

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace sinter::host {

/// Translates a module in the LLVM dialect to LLVM IR for the host, with the
/// host's data layout.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context);

/// Optimises host LLVM IR at -O3.
llvm::Error optimizeLLVMIR(llvm::Module &module);

/// Writes `module` as a relocatable (PIC) object file for the host CPU.
llvm::Error emitObject(llvm::Module &module, llvm::raw_pwrite_stream &os);

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_OBJECTEMITTER_H
