//===- HostMemory.cpp - How much memory the host has free ----------------===//

#include "device/HostMemory.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>

namespace sinter::rt {

namespace {

/// The first number in `path`, or none (also for a cgroup's "max").
std::optional<uint64_t> readNumber(const std::string &path) {
  std::ifstream in(path);
  uint64_t value;
  if (in >> value)
    return value;
  return std::nullopt;
}

/// MemAvailable from a meminfo file, in bytes.
std::optional<uint64_t> memAvailable(const std::string &meminfo) {
  std::ifstream in(meminfo);
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

/// `key`'s value in a cgroup's memory.stat, or none.
std::optional<uint64_t> statValue(const std::string &statPath, const std::string &key) {
  std::ifstream in(statPath);
  std::string name;
  uint64_t value;
  while (in >> name >> value)
    if (name == key)
      return value;
  return std::nullopt;
}

/// What a cgroup's limit leaves: its limit less its usage, where both
/// read. The usage counts the page cache; its inactive files, which the
/// kernel reclaims before it kills anything, are left out.
std::optional<uint64_t> cgroupLeft(const std::string &dir, const char *limitFile,
                                   const char *usageFile, const char *inactiveKey) {
  std::optional<uint64_t> limit = readNumber(dir + limitFile),
                          usage = readNumber(dir + usageFile);
  if (!limit || !usage)
    return std::nullopt;
  uint64_t used = *usage - std::min(*usage, statValue(dir + "/memory.stat", inactiveKey)
                                                .value_or(0));
  return *limit > used ? *limit - used : 0;
}

/// This process's cgroup folders: the unified (v2) one and the memory
/// controller's (v1), from a /proc/self/cgroup file; each "" where absent.
std::pair<std::string, std::string> ownCgroups(const std::string &cgroupFile) {
  std::ifstream in(cgroupFile);
  std::string line, unified, memory;
  while (std::getline(in, line)) {
    // "ID:CONTROLLERS:PATH"; the unified hierarchy's has no controllers.
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    std::string controllers = line.substr(first + 1, second - first - 1),
                path = line.substr(second + 1);
    if (controllers.empty())
      unified = path;
    else if (("," + controllers + ",").find(",memory,") != std::string::npos)
      memory = path;
  }
  return {unified, memory};
}

} // namespace

std::optional<FreeMemory> hostFreeMemory(const std::string &root) {
  std::optional<FreeMemory> best;
  auto consider = [&](std::optional<uint64_t> bytes, const char *source) {
    if (bytes && (!best || *bytes < best->bytes))
      best = FreeMemory{*bytes, source};
  };
  consider(memAvailable(root + "/proc/meminfo"), "MemAvailable in /proc/meminfo");
  // The process's own cgroup, and the root of the hierarchy it sees (a
  // container's, under a cgroup namespace).
  auto [unified, memory] = ownCgroups(root + "/proc/self/cgroup");
  for (const std::string &path : {unified, std::string("/")})
    consider(cgroupLeft(root + "/sys/fs/cgroup" + path, "/memory.max", "/memory.current",
                        "inactive_file"),
             "the cgroup's memory.max less memory.current");
  for (const std::string &path : {memory, std::string("/")})
    consider(cgroupLeft(root + "/sys/fs/cgroup/memory" + path, "/memory.limit_in_bytes",
                        "/memory.usage_in_bytes", "total_inactive_file"),
             "the cgroup's memory.limit_in_bytes less memory.usage_in_bytes");
  return best;
}

} // namespace sinter::rt
