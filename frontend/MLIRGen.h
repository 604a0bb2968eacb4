//===- MLIRGen.h - Model graphs to the `graph` dialect --------------------===//
#ifndef SINTER_FRONTEND_MLIRGEN_H
#define SINTER_FRONTEND_MLIRGEN_H

#include "frontend/Program.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace sinter {

/// Builds one `graph.model` per phase, every op located at the user's source
/// (with call sites for ops that come from a def). Returns null when the IR
/// does not verify (the diagnostic has been emitted).
mlir::OwningOpRef<mlir::ModuleOp>
generateModule(mlir::MLIRContext &context, const std::vector<ModelGraph> &phases,
               const SourceManager &sources);

} // namespace sinter

#endif // SINTER_FRONTEND_MLIRGEN_H
