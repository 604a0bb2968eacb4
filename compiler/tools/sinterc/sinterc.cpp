//===- sinterc.cpp - The Sinter compiler driver ---------------------------===//
//
// sinterc FILE.sn [--model NAME] [--config CFG.pbtxt] [-D NAME=VALUE]...
//         [--emit=STAGE] [--target cpu|cuda] [--list-params] [-o OUT]
//
// The steps of a compile, in order: the options (Options.cpp), the config
// (ApplyConfig.cpp), the front end, the steps to linalg (Steps.cpp), and
// what is written (Outputs.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/InitAll.h"
#include "compiler/tools/sinterc/Driver.h"
#include "compiler/tools/sinterc/ListParams.h"
#include "compiler/tools/sinterc/Options.h"
#include "frontend/MLIRDiagnostics.h"
#include "frontend/Sema.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>
#include <sstream>

namespace sinterc {
namespace {

int run() {
  // Reported on stderr when run returns (--timing).
  mlir::DefaultTimingManager timingManager;
  timingManager.setEnabled(timePhases);
  timingManager.setDisplayMode(mlir::DefaultTimingManager::DisplayMode::Tree);
  mlir::TimingScope timing = timingManager.getRootScope();
  mlir::TimingScope frontend = timing.nest("Frontend (parse, elaborate)");
  sinter::SourceManager sources;
  sinter::DiagnosticEngine diags(sources);
  sinter::SemaOptions options;
  options.stdlibDir = standardLibrary();

  std::string path = inputFile;
  std::string model = modelName;
  std::optional<sinter::config::TrainConfig> config;
  if (!loadConfig(config, options, path, model))
    return 1;
  if (compilesForCuda(config) && emitStage > Emit::Ptx && !listParams) {
    std::string missing = missingForCuda(emitStage);
    if (!missing.empty()) {
      std::cerr << "sinterc: error: " << missing << "\n";
      return 1;
    }
  }
  if (path.empty()) {
    std::cerr << "sinterc: error: no input file; give FILE.sn or --config "
                 "with a 'model' field\n";
    return 1;
  }
  if (!addDefines(options))
    return 1;

  sinter::SourceSet files(sources, diags);
  if (!files.load(path, options.stdlibDir))
    return 1;

  // A program is written by the linker; every other stage through `output`.
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output;
  if (emitStage != Emit::Exe || listParams || reportMemoryOpt) {
    output = mlir::openOutputFile(outputFile, &errorMessage);
    if (!output) {
      std::cerr << "sinterc: error: " << errorMessage << "\n";
      return 1;
    }
  }

  if (emitStage == Emit::Ast && !listParams) {
    std::ostringstream os;
    sinter::ast::dump(*files.mainFile(), sources, os);
    output->os() << os.str();
    output->keep();
    return 0;
  }

  std::vector<sinter::ModelGraph> phases;
  for (bool training : {true, false}) {
    std::optional<sinter::ModelGraph> graph =
        sinter::elaborate(files, model, training, options, diags);
    if (!graph)
      return 1;
    phases.push_back(std::move(*graph));
  }

  if (listParams) {
    std::ostringstream os;
    sinter::printParamTable(phases.front(), os);
    output->os() << os.str();
    output->keep();
    return 0;
  }

  frontend.stop();
  mlir::DialectRegistry registry;
  sinter::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Errors point at the user's source; the op's IR would only be noise.
  context.printOpOnDiagnostic(false);
  sinter::SourceDiagnosticHandler handler(context, diags, sources);
  if (config)
    warnLocalBatchNorm(*config, phases.front(), diags);
  if (reportMemoryOpt) {
    if (!config) {
      std::cerr << "sinterc: error: --report-memory needs a config (--config FILE)\n";
      return 1;
    }
    int rc = reportMemory(context, phases, sources, *config, timing, output->os());
    if (rc == 0)
      output->keep();
    return rc;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildSteps(context, phases, sources, config, timing);
  if (!module)
    return 1;
  if (emitStage == Emit::Graph) {
    module->print(output->os());
    output->keep();
    return 0;
  }
  return lower(*module, context, compilesForCuda(config), output.get(), timing);
}

} // namespace
} // namespace sinterc

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (!sinterc::parseOptions(argc, argv))
    return 1;
  return sinterc::run();
}
