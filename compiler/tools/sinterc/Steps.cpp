//===- Steps.cpp - The steps, from the graph dialect to linalg ------------===//
//
// Builds the train and eval steps of the elaborated model: the loss, then
// the steps after it, to fused linalg (or the train dialect for
// --emit=train). A train step that cannot be built leaves a program that
// only evaluates, with the reason as a warning.
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/sinterc/Driver.h"
#include "compiler/tools/sinterc/Options.h"

#include "compiler/Pipelines/Pipelines.h"
#include "frontend/MLIRDiagnostics.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include <iostream>
#include <sstream>

namespace sinterc {
namespace {

/// Adds the passes that build the steps after the loss: up to the
/// micro-batch loop for --emit=train, to fused linalg otherwise.
void addStepPasses(mlir::PassManager &pm) {
  sinter::buildStepPipeline(pm);
  if (emitStage != Emit::Train)
    sinter::buildTrainToLinalgPipeline(pm);
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp>
buildSteps(mlir::MLIRContext &context, std::vector<sinter::ModelGraph> &phases,
           const sinter::SourceManager &sources,
           const std::optional<sinter::config::TrainConfig> &config,
           mlir::TimingScope &timing) {
  mlir::TimingScope generation = timing.nest("MLIR generation (graph dialect)");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      generateSteps(context, phases, sources, config);
  generation.stop();
  if (!module || emitStage == Emit::Graph)
    return module;
  mlir::TimingScope passes = timing.nest("Passes (graph to linalg)");
  mlir::PassManager loss(&context);
  loss.enableTiming(passes);
  sinter::buildLossPipeline(loss);
  if (mlir::failed(loss.run(*module)))
    return nullptr;
  // The steps' diagnostics are held, formatted at the user's source, until
  // it is known whether they are errors or the reason for an eval-only
  // program.
  std::ostringstream held;
  bool built;
  {
    sinter::DiagnosticEngine holding(sources);
    holding.setStream(held);
    sinter::SourceDiagnosticHandler handler(context, holding, sources);
    mlir::PassManager pm(&context);
    pm.enableTiming(passes);
    addStepPasses(pm);
    built = mlir::succeeded(pm.run(*module));
  }
  if (built || phases.size() < 2 || !phases.front().training) {
    std::cerr << held.str();
    return built ? std::move(module) : nullptr;
  }
  std::string trainModel = phases.front().name;
  phases.erase(phases.begin());
  mlir::OwningOpRef<mlir::ModuleOp> eval =
      generateSteps(context, phases, sources, config);
  if (!eval)
    return nullptr;
  mlir::PassManager pm(&context);
  pm.enableTiming(passes);
  sinter::buildLossPipeline(pm);
  addStepPasses(pm);
  if (mlir::failed(pm.run(*eval)))
    return nullptr;
  std::cerr << "sinterc: warning: no training step for model '" << trainModel
            << "'; the program will only evaluate, because:\n"
            << held.str();
  return eval;
}

} // namespace sinterc
