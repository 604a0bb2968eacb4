//===- FrontendFuzzerMain.cpp - libFuzzer entry point for the frontend ----===//
//
// Built with clang's -fsanitize=fuzzer,address,undefined (SINTER_ENABLE_FUZZ)
// and run by scripts/fuzz.sh.

#include "test/Fuzz/FrontendFuzzer.h"

#include <cstddef>
#include <cstdint>

#ifndef SINTER_STDLIB_DIR
#define SINTER_STDLIB_DIR "std"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024)
    return 0;
  sinter::SourceManager sources;
  sinter::fuzz::runFrontend(std::string(reinterpret_cast<const char *>(data), size),
                            SINTER_STDLIB_DIR, sources);
  return 0;
}
