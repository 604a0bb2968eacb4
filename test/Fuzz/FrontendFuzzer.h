//===- FrontendFuzzer.h - One fuzz input through the whole frontend -------===//
#ifndef SINTER_TEST_FUZZ_FRONTENDFUZZER_H
#define SINTER_TEST_FUZZ_FRONTENDFUZZER_H

#include "frontend/Program.h"

#include <optional>
#include <string>
#include <vector>

namespace sinter::fuzz {

/// Lexes, parses and elaborates `text` as a main file (both phases, with B
/// symbolic and then bound). Diagnostics are discarded. Returns the phases of
/// the first successful elaboration, or nothing when the input is rejected.
std::optional<std::vector<ModelGraph>> runFrontend(const std::string &text,
                                                   const std::string &stdlibDir,
                                                   SourceManager &sources);

} // namespace sinter::fuzz

#endif // SINTER_TEST_FUZZ_FRONTENDFUZZER_H
