//===- LibFuzzerMain.cpp - libFuzzer entry point for the frontend ---------===//
//
// Built by scripts/fuzz.sh with clang's -fsanitize=fuzzer,address,undefined.

#include "frontend/fuzz/FrontendFuzzer.h"

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
