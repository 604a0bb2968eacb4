//===- ReplayMain.cpp - Replays the fuzz corpus through the compiler ------===//
//
// sinter-fuzz-replay FILE_OR_DIR...
// Runs every input through the frontend and, when the frontend accepts it,
// through MLIRGen and the graph dialect's verifiers: an input that Sema
// accepts must produce verified IR. Exits non-zero on the first violation;
// a crash is a failure too.
//
//===----------------------------------------------------------------------===//

#include "compiler/InitAll.h"
#include "frontend/MLIRDiagnostics.h"
#include "frontend/MLIRGen.h"
#include "test/Fuzz/FrontendFuzzer.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;

int main(int argc, char **argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    fs::path p = argv[i];
    if (fs::is_directory(p)) {
      for (const auto &entry : fs::directory_iterator(p))
        if (entry.is_regular_file())
          inputs.push_back(entry.path());
    } else {
      inputs.push_back(p);
    }
  }
  std::sort(inputs.begin(), inputs.end());
  mlir::DialectRegistry registry;
  sinter::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  unsigned accepted = 0;
  for (const fs::path &p : inputs) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    sinter::SourceManager sources;
    auto phases = sinter::fuzz::runFrontend(ss.str(), SINTER_STDLIB_DIR, sources);
    if (!phases)
      continue;
    ++accepted;
    sinter::DiagnosticEngine diags(sources);
    sinter::SourceDiagnosticHandler handler(context, diags, sources);
    if (!sinter::generateModule(context, *phases, sources)) {
      std::cerr << "replay: " << p.string()
                << ": accepted by the frontend but the IR does not verify\n";
      return 1;
    }
  }
  std::cout << "replayed " << inputs.size() << " inputs, " << accepted
            << " accepted and verified\n";
  return 0;
}
