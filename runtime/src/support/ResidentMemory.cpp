//===- ResidentMemory.cpp - How much memory this process holds -----------===//

#include "support/ResidentMemory.h"

#include <cstdio>
#include <cstring>

namespace sinter::rt {

/// The value of `key` ("VmRSS:", in kB) in /proc/self/status, in bytes.
static std::optional<uint64_t> statusBytes(const char *key) {
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f)
    return std::nullopt;
  char line[256];
  std::optional<uint64_t> bytes;
  size_t n = std::strlen(key);
  while (std::fgets(line, sizeof line, f)) {
    unsigned long long kb;
    if (std::strncmp(line, key, n) == 0 && std::sscanf(line + n, "%llu", &kb) == 1) {
      bytes = uint64_t(kb) * 1024;
      break;
    }
  }
  std::fclose(f);
  return bytes;
}

std::optional<uint64_t> residentBytes() { return statusBytes("VmRSS:"); }
std::optional<uint64_t> peakResidentBytes() { return statusBytes("VmHWM:"); }
std::optional<uint64_t> residentFileBytes() { return statusBytes("RssFile:"); }

} // namespace sinter::rt
