//===- MemoryPlanner.h - Static offsets for buffers with known lifetimes --===//
//
// The memory planner proper, free of MLIR: given each buffer's size and the
// interval of program positions in which it is live, it assigns offsets in
// one arena so that buffers live at the same time never overlap, and reports
// the arena's size. The pass that feeds it (PlanMemory.cpp) and, later,
// `sinterc --report-memory` share it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_MEMORYPLAN_MEMORYPLANNER_H
#define SINTER_MEMORYPLAN_MEMORYPLANNER_H

#include <cstdint>
#include <vector>

namespace sinter::memory {

/// A buffer of `size` bytes, live from position `first` to `last` inclusive.
struct Lifetime {
  uint64_t size = 0;
  int64_t first = 0;
  int64_t last = 0;
};

struct ArenaPlan {
  std::vector<uint64_t> offsets; ///< one per lifetime, `alignment`-aligned
  uint64_t size = 0;             ///< bytes the arena needs
  uint64_t sumOfSizes = 0;       ///< what separate allocations would take
};

/// The bytes every planned buffer's offset is a multiple of: what the
/// libraries the step calls (cuBLASLt) are told of every pointer.
inline constexpr uint64_t kBufferAlignment = 64;

/// Places the largest buffers first, each at the lowest aligned offset free
/// for its whole lifetime (greedy best-fit by size, as in TFLite's and
/// XLA's heap simulators). Deterministic: ties break by position.
ArenaPlan planArena(const std::vector<Lifetime> &buffers,
                    uint64_t alignment = kBufferAlignment);

} // namespace sinter::memory

#endif // SINTER_MEMORYPLAN_MEMORYPLANNER_H
