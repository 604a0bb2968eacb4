//===- HostMemory.h - How much memory the host has free --------*- C++ -*-===//
//
// Read before a plan's buffers are allocated: on Linux an allocation past
// the machine's memory succeeds and the process is killed when it touches
// the pages, so a plan that cannot fit is refused first, with its numbers.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DEVICE_HOSTMEMORY_H
#define SINTER_RT_DEVICE_HOSTMEMORY_H

#include <cstdint>
#include <optional>
#include <string>

namespace sinter::rt {

/// Bytes this process may still allocate: the kernel's MemAvailable, or
/// less where a cgroup's memory limit (v2 or v1, the process's own or its
/// root's) leaves less; with where the figure came from, for messages.
/// Empty where none can be read. Ranks that share the machine each see
/// the whole: each is checked against what is free when it starts.
/// `root` prefixes every file read (a test's fake tree).
struct FreeMemory {
  uint64_t bytes;
  std::string source;
};
std::optional<FreeMemory> hostFreeMemory(const std::string &root = "");

} // namespace sinter::rt

#endif // SINTER_RT_DEVICE_HOSTMEMORY_H
