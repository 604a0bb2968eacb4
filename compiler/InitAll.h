//===- InitAll.h - Every Sinter dialect and pass, for all tools -----------===//
#ifndef SINTER_COMPILER_INITALL_H
#define SINTER_COMPILER_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace sinter {
/// Adds Sinter's dialects and the upstream dialects its pipelines use.
void registerAllDialects(mlir::DialectRegistry &registry);
/// Registers Sinter's passes and pipelines with the global registry.
void registerAllPasses();
} // namespace sinter

#endif // SINTER_COMPILER_INITALL_H
