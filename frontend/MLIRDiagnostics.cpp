//===- MLIRDiagnostics.cpp - MLIR diagnostics shown at the user's source --===//

#include "frontend/MLIRDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

namespace sinter {

SourceDiagnosticHandler::SourceDiagnosticHandler(mlir::MLIRContext &context,
                                                 DiagnosticEngine &diags,
                                                 const SourceManager &sources)
    : context_(context), diags_(diags), sources_(sources) {
  id_ = context.getDiagEngine().registerHandler(
      [this](mlir::Diagnostic &diag) { return handle(diag); });
}

SourceDiagnosticHandler::~SourceDiagnosticHandler() {
  context_.getDiagEngine().eraseHandler(id_);
}

Loc SourceDiagnosticHandler::toLoc(mlir::Location loc,
                                   std::vector<Loc> &callers) const {
  if (auto call = mlir::dyn_cast<mlir::CallSiteLoc>(loc)) {
    Loc callee = toLoc(call.getCallee(), callers);
    std::vector<Loc> outer;
    callers.push_back(toLoc(call.getCaller(), outer));
    callers.insert(callers.end(), outer.begin(), outer.end());
    return callee;
  }
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc))
    return toLoc(name.getChildLoc(), callers);
  if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc)) {
    for (mlir::Location l : fused.getLocations()) {
      Loc found = toLoc(l, callers);
      if (found.valid())
        return found;
    }
    return Loc();
  }
  if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc)) {
    std::string path = file.getFilename().str();
    for (uint32_t id = 1; id < sources_.fileCount(); ++id)
      if (sources_.path(id) == path)
        return Loc{id, file.getLine(), file.getColumn()};
  }
  return Loc();
}

mlir::LogicalResult SourceDiagnosticHandler::handle(mlir::Diagnostic &diag) {
  auto report = [&](mlir::Diagnostic &d, Severity severity) {
    std::vector<Loc> callers;
    Loc loc = toLoc(d.getLocation(), callers);
    diags_.report(loc, severity, d.str());
    for (Loc caller : callers)
      diags_.note(caller, "in the call from here");
  };
  Severity severity = Severity::Note;
  if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
    severity = Severity::Error;
  else if (diag.getSeverity() == mlir::DiagnosticSeverity::Warning)
    severity = Severity::Warning;
  report(diag, severity);
  for (mlir::Diagnostic &note : diag.getNotes())
    report(note, Severity::Note);
  return mlir::success();
}

} // namespace sinter
