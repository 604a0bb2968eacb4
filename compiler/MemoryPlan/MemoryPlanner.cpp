//===- MemoryPlanner.cpp - Static offsets for buffers with known lifetimes ===//

#include "compiler/MemoryPlan/MemoryPlanner.h"

#include <algorithm>
#include <numeric>

namespace sinter::memory {

static uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

ArenaPlan planArena(const std::vector<Lifetime> &buffers, uint64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].first < buffers[b].first;
  });

  struct Placed {
    uint64_t begin, end;
    size_t index;
  };
  std::vector<Placed> placed;
  for (size_t i : order) {
    const Lifetime &buf = buffers[i];
    uint64_t size = alignUp(std::max<uint64_t>(buf.size, 1), alignment);
    plan.sumOfSizes += size;
    // The address ranges of the buffers live at the same time, in order.
    std::vector<std::pair<uint64_t, uint64_t>> busy;
    for (const Placed &p : placed) {
      const Lifetime &other = buffers[p.index];
      if (other.first <= buf.last && buf.first <= other.last)
        busy.push_back({p.begin, p.end});
    }
    std::sort(busy.begin(), busy.end());
    // The smallest gap that fits (best fit), else the end.
    uint64_t best = UINT64_MAX, bestGap = UINT64_MAX, cursor = 0;
    for (const auto &[begin, end] : busy) {
      if (begin > cursor && begin - cursor >= size && begin - cursor < bestGap) {
        best = cursor;
        bestGap = begin - cursor;
      }
      cursor = std::max(cursor, end);
    }
    uint64_t offset = best != UINT64_MAX ? best : cursor;
    plan.offsets[i] = offset;
    placed.push_back({offset, offset + size, i});
    plan.size = std::max(plan.size, offset + size);
  }
  return plan;
}

} // namespace sinter::memory
