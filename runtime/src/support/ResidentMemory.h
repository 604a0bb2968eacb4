//===- ResidentMemory.h - How much memory this process holds ----*- C++ -*-===//
//
// The kernel's count of this process's resident pages (Linux's
// /proc/self/status): now, and the most it has held. A run compares what it
// measured with what its plan says it allocates.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_SUPPORT_RESIDENTMEMORY_H
#define SINTER_RT_SUPPORT_RESIDENTMEMORY_H

#include <cstdint>
#include <optional>

namespace sinter::rt {

/// Bytes resident now (VmRSS) and at most so far (VmHWM); nullopt where the
/// system does not say.
std::optional<uint64_t> residentBytes();
std::optional<uint64_t> peakResidentBytes();
/// Of the resident bytes now, those of mapped files (RssFile): the
/// program's code and libraries as they are first run, and mapped data.
std::optional<uint64_t> residentFileBytes();

} // namespace sinter::rt

#endif // SINTER_RT_SUPPORT_RESIDENTMEMORY_H
