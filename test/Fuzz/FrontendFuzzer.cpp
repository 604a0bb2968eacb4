//===- FrontendFuzzer.cpp - One fuzz input through the whole frontend -----===//

#include "test/Fuzz/FrontendFuzzer.h"

#include "frontend/Sema.h"

#include <sstream>

namespace sinter::fuzz {

std::optional<std::vector<ModelGraph>> runFrontend(const std::string &text,
                                                   const std::string &stdlibDir,
                                                   SourceManager &sources) {
  std::ostringstream sink;
  DiagnosticEngine diags(sources);
  diags.setStream(sink);
  SourceSet files(sources, diags);
  if (!files.loadBuffer("fuzz.sn", text, stdlibDir))
    return std::nullopt;
  std::optional<std::vector<ModelGraph>> first;
  for (const char *batch : {"", "4"}) {
    SemaOptions options;
    options.stdlibDir = stdlibDir;
    if (*batch)
      options.defines.push_back({"B", batch});
    std::vector<ModelGraph> phases;
    for (bool training : {true, false}) {
      DiagnosticEngine phaseDiags(sources);
      phaseDiags.setStream(sink);
      std::optional<ModelGraph> g =
          elaborate(files, "", training, options, phaseDiags);
      if (!g)
        break;
      phases.push_back(std::move(*g));
    }
    if (phases.size() == 2 && !first)
      first = std::move(phases);
  }
  return first;
}

} // namespace sinter::fuzz
