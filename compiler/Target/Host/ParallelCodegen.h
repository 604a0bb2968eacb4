//===- ParallelCodegen.h - Optimise and emit a module on every core -*- C++ -*-===//
#ifndef SINTER_TARGET_HOST_PARALLELCODEGEN_H
#define SINTER_TARGET_HOST_PARALLELCODEGEN_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace sinter::host {

/// Splits `module` into `jobs` parts by function, then optimises each at -O3
/// and writes it as an object file, on `jobs` threads. Returns the paths of
/// the temporary object files, in part order; the caller removes them.
llvm::Expected<std::vector<std::string>>
compileInParallel(llvm::Module &module, unsigned jobs);

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_PARALLELCODEGEN_H
