//===- HostMemory.cpp - How much memory the host has free ----------------===//

#include "device/HostMemory.h"

#include <fstream>
#include <sstream>

namespace sinter::rt {

namespace {

/// The first number in `path`, or none (also for a cgroup's "max").
std::optional<uint64_t> readNumber(const char *path) {
  std::ifstream in(path);
  uint64_t value;
  if (in >> value)
    return value;
  return std::nullopt;
}

/// MemAvailable from /proc/meminfo, in bytes.
std::optional<uint64_t> memAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kib;
    if (fields >> key >> kib && key == "MemAvailable:")
      return kib * 1024;
  }
  return std::nullopt;
}

/// What a cgroup's limit leaves: its limit less its usage, where both read.
std::optional<uint64_t> cgroupLeft(const char *limitPath, const char *usagePath) {
  std::optional<uint64_t> limit = readNumber(limitPath), usage = readNumber(usagePath);
  if (!limit || !usage)
    return std::nullopt;
  return *limit > *usage ? *limit - *usage : 0;
}

} // namespace

std::optional<FreeMemory> hostFreeMemory() {
  std::optional<FreeMemory> best;
  auto consider = [&](std::optional<uint64_t> bytes, const char *source) {
    if (bytes && (!best || *bytes < best->bytes))
      best = FreeMemory{*bytes, source};
  };
  consider(memAvailable(), "MemAvailable in /proc/meminfo");
  consider(cgroupLeft("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
           "the cgroup's memory.max less memory.current");
  consider(cgroupLeft("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                      "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
           "the cgroup's memory.limit_in_bytes less memory.usage_in_bytes");
  return best;
}

} // namespace sinter::rt
