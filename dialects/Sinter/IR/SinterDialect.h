//===- SinterDialect.h - The owner of the sinter.* attributes ---*- C++ -*-===//
#ifndef SINTER_SINTER_IR_SINTERDIALECT_H
#define SINTER_SINTER_IR_SINTERDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Sinter/IR/SinterDialect.h.inc"

namespace mlir {
class DialectRegistry;
}

namespace sinter {
/// Registers the dialect, loaded with func and llvm (which hold the steps) so
/// that every IR holding a step has its sinter.* attributes verified.
void registerSinterDialect(mlir::DialectRegistry &registry);
} // namespace sinter

#endif // SINTER_SINTER_IR_SINTERDIALECT_H
