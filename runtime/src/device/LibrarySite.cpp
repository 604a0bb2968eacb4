//===- LibrarySite.cpp - Which .sn op a library call computes -------------===//

#include "device/LibrarySite.h"

#include "runtime/contract/abi.h"

#include <atomic>
#include <cstring>

namespace sinter::rt {
namespace {

/// Set by the step's thread before each library call, read by the call.
std::atomic<int64_t> current{-1};

} // namespace

void setLibrarySite(int64_t index) { current.store(index, std::memory_order_relaxed); }

std::string librarySiteSuffix() {
  int64_t index = current.load(std::memory_order_relaxed);
  if (index < 0 || !sinter_library_sites || !&sinter_library_sites_size)
    return "";
  // The table's entries are NUL-terminated, in index order.
  const char *entry = sinter_library_sites;
  const char *end = sinter_library_sites + sinter_library_sites_size;
  for (int64_t i = 0; i < index && entry < end; ++i)
    entry += std::strlen(entry) + 1;
  if (entry >= end)
    return "";
  return std::string(" (op at ") + entry + ")";
}

} // namespace sinter::rt

extern "C" void sinter_rt_library_site(int64_t site) { sinter::rt::setLibrarySite(site); }
