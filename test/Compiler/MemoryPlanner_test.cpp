//===- MemoryPlannerTest.cpp - Arena offsets from lifetimes ---------------===//

#include "compiler/MemoryPlan/MemoryPlanner.h"

#include <gtest/gtest.h>

#include <random>

using namespace sinter::memory;

namespace {

/// No two buffers live at the same time share a byte; all fit the arena.
void expectValid(const std::vector<Lifetime> &buffers, const ArenaPlan &plan) {
  ASSERT_EQ(plan.offsets.size(), buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % 64, 0u);
    EXPECT_LE(plan.offsets[i] + buffers[i].size, plan.size);
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      bool together = buffers[i].first <= buffers[j].last &&
                      buffers[j].first <= buffers[i].last;
      bool apart = plan.offsets[i] + buffers[i].size <= plan.offsets[j] ||
                   plan.offsets[j] + buffers[j].size <= plan.offsets[i];
      EXPECT_TRUE(!together || apart) << "buffers " << i << " and " << j;
    }
  }
}

TEST(MemoryPlanner, DisjointLifetimesShareMemory) {
  std::vector<Lifetime> chain = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3},
                                 {1000, 3, 4}};
  ArenaPlan plan = planArena(chain);
  expectValid(chain, plan);
  // A chain needs two live buffers at a time, never four.
  EXPECT_EQ(plan.size, 2 * 1024u);
  EXPECT_EQ(plan.sumOfSizes, 4 * 1024u);
}

TEST(MemoryPlanner, OverlappingLifetimesDoNot) {
  std::vector<Lifetime> all = {{100, 0, 9}, {200, 0, 9}, {300, 0, 9}};
  ArenaPlan plan = planArena(all);
  expectValid(all, plan);
  EXPECT_EQ(plan.size, 128u + 256u + 320u);
}

TEST(MemoryPlanner, SmallBufferFillsAGap) {
  // The small buffer lives while the two large ones do, in the hole left
  // between them by a buffer that died.
  std::vector<Lifetime> b = {{4096, 0, 10}, {1024, 0, 2}, {4096, 0, 10},
                             {512, 5, 8}};
  ArenaPlan plan = planArena(b);
  expectValid(b, plan);
  EXPECT_LE(plan.size, 4096u * 2 + 1024u);
}

TEST(MemoryPlanner, RandomLifetimesAreValidAndDeterministic) {
  std::mt19937_64 rng(42);
  std::vector<Lifetime> b;
  for (int i = 0; i < 300; ++i) {
    int64_t first = rng() % 200;
    b.push_back({1 + rng() % 100000, first, first + int64_t(rng() % 40)});
  }
  ArenaPlan plan = planArena(b);
  expectValid(b, plan);
  EXPECT_LT(plan.size, plan.sumOfSizes);
  EXPECT_EQ(planArena(b).offsets, plan.offsets);
}

} // namespace
