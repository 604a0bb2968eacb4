//===- MLIRDiagnostics.h - MLIR diagnostics shown at the user's source ----===//
#ifndef SINTER_FRONTEND_MLIRDIAGNOSTICS_H
#define SINTER_FRONTEND_MLIRDIAGNOSTICS_H

#include "frontend/Diagnostics.h"

#include "mlir/IR/Diagnostics.h"

namespace sinter {

/// While alive, prints every MLIR diagnostic of `context` like a frontend
/// error: `file:line:col: error: ...`, the source line, a caret, and a note
/// for each call site the location went through. So a verifier or a late
/// pass points at the `.sn` line that produced the op.
class SourceDiagnosticHandler {
public:
  SourceDiagnosticHandler(mlir::MLIRContext &context, DiagnosticEngine &diags,
                          const SourceManager &sources);
  ~SourceDiagnosticHandler();

private:
  mlir::LogicalResult handle(mlir::Diagnostic &diag);
  Loc toLoc(mlir::Location loc, std::vector<Loc> &callers) const;

  mlir::MLIRContext &context_;
  DiagnosticEngine &diags_;
  const SourceManager &sources_;
  mlir::DiagnosticEngine::HandlerID id_;
};

} // namespace sinter

#endif // SINTER_FRONTEND_MLIRDIAGNOSTICS_H
