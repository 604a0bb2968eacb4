//===- Sampler_test.cpp - DistributedSampler semantics --------------------===//

#include "data/Sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace sinter::rt;

namespace {

Sampler make(uint64_t n, uint64_t g, uint64_t b, uint64_t w, bool shuffle = true,
             bool dropLast = true, uint64_t seed = 7) {
  Expected<Sampler> s = Sampler::create({n, g, b, w, seed, shuffle, dropLast});
  EXPECT_TRUE(s.ok()) << s.message();
  return s.take();
}

/// The multiset of (sample, padded) pairs that all ranks and micro-batches
/// of global batch `pos` read, sorted.
std::vector<std::pair<uint64_t, uint8_t>> unionOf(Sampler &s, SamplerPosition pos) {
  std::vector<std::pair<uint64_t, uint8_t>> all;
  for (uint64_t r = 0; r < s.options().worldSize; ++r)
    for (uint64_t m = 0; m < s.accumulationSteps(); ++m) {
      MicroBatchIndices mb;
      EXPECT_TRUE(s.microBatch(pos, r, m, mb).ok());
      EXPECT_EQ(mb.indices.size(), s.options().microBatch);
      for (size_t i = 0; i < mb.indices.size(); ++i)
        all.emplace_back(mb.indices[i], mb.padded[i]);
    }
  std::sort(all.begin(), all.end());
  return all;
}

} // namespace

TEST(Sampler, OrderingIsAPermutation) {
  for (uint64_t n : {1, 2, 3, 10, 1000}) {
    std::vector<uint64_t> p = samplerOrdering(n, 3, 0, true);
    std::vector<uint64_t> sorted = p;
    std::sort(sorted.begin(), sorted.end());
    for (uint64_t i = 0; i < n; ++i)
      ASSERT_EQ(sorted[i], i);
  }
  std::vector<uint64_t> id = samplerOrdering(5, 3, 9, false);
  EXPECT_EQ(id, (std::vector<uint64_t>{0, 1, 2, 3, 4}));
}

TEST(Sampler, ReshufflesEveryEpoch) {
  std::vector<uint64_t> e0 = samplerOrdering(1000, 1, 0, true);
  std::vector<uint64_t> e1 = samplerOrdering(1000, 1, 1, true);
  EXPECT_NE(e0, e1);
  EXPECT_EQ(e0, samplerOrdering(1000, 1, 0, true)) << "same (seed, epoch), same order";
  EXPECT_NE(e0, samplerOrdering(1000, 2, 0, true)) << "the seed matters";
  // Not the identity, and not far from uniform: each value lands in the
  // first half about half the time over epochs.
  uint64_t firstHalf = 0;
  for (uint64_t e = 0; e < 200; ++e) {
    std::vector<uint64_t> p = samplerOrdering(10, 5, e, true);
    firstHalf += std::find(p.begin(), p.end(), 0) - p.begin() < 5;
  }
  EXPECT_GT(firstHalf, 70u);
  EXPECT_LT(firstHalf, 130u);
}

TEST(Sampler, SameGlobalBatchesForAnyWorldSizeAndAccumulation) {
  // G = W * k * b with G = 16: (W, k, b) = (1,4,4), (2,2,4), (4,1,4), (8,1,2),
  // (1,16,1), (16,1,1).
  struct Config { uint64_t w, b; };
  for (bool dropLast : {true, false}) {
    const uint64_t n = 100, g = 16;
    Sampler ref = make(n, g, 16, 1, true, dropLast);
    for (Config c : {Config{1, 4}, Config{2, 4}, Config{4, 4}, Config{8, 2}, Config{1, 1},
                     Config{16, 1}}) {
      Sampler s = make(n, g, c.b, c.w, true, dropLast);
      ASSERT_EQ(s.stepsPerEpoch(), ref.stepsPerEpoch());
      EXPECT_EQ(s.accumulationSteps(), g / (c.w * c.b));
      for (uint64_t epoch : {0, 1, 5})
        for (uint64_t step = 0; step < s.stepsPerEpoch(); ++step) {
          MicroBatchIndices whole;
          ASSERT_TRUE(ref.globalBatch({epoch, step}, whole).ok());
          std::vector<std::pair<uint64_t, uint8_t>> want;
          for (size_t i = 0; i < whole.indices.size(); ++i)
            want.emplace_back(whole.indices[i], whole.padded[i]);
          std::sort(want.begin(), want.end());
          EXPECT_EQ(unionOf(s, {epoch, step}), want)
              << "W=" << c.w << " b=" << c.b << " epoch " << epoch << " step " << step;
        }
    }
  }
}

TEST(Sampler, AssignmentRule) {
  // Position q -> micro-batch q / (W*b), rank (q / b) % W, slot q % b.
  Sampler s = make(8, 8, 2, 2, /*shuffle=*/false);
  MicroBatchIndices mb;
  ASSERT_TRUE(s.microBatch({0, 0}, 1, 0, mb).ok());
  EXPECT_EQ(mb.indices, (std::vector<uint64_t>{2, 3}));
  ASSERT_TRUE(s.microBatch({0, 0}, 0, 1, mb).ok());
  EXPECT_EQ(mb.indices, (std::vector<uint64_t>{4, 5}));
  ASSERT_TRUE(s.microBatch({0, 0}, 1, 1, mb).ok());
  EXPECT_EQ(mb.indices, (std::vector<uint64_t>{6, 7}));
}

TEST(Sampler, EpochCoversEveryRealSampleOnce) {
  Sampler s = make(103, 12, 3, 2, true, /*dropLast=*/false);
  EXPECT_EQ(s.stepsPerEpoch(), 9u); // ceil(103 / 12)
  std::multiset<uint64_t> real;
  uint64_t padded = 0;
  for (uint64_t step = 0; step < 9; ++step)
    for (auto [sample, pad] : unionOf(s, {2, step})) {
      if (pad)
        ++padded;
      else
        real.insert(sample);
    }
  EXPECT_EQ(real.size(), 103u);
  EXPECT_EQ(std::set<uint64_t>(real.begin(), real.end()).size(), 103u);
  EXPECT_EQ(padded, 9 * 12 - 103u);
}

TEST(Sampler, PaddingWrapsAroundLikeDistributedSampler) {
  // N = 10, G = 4: the last batch is positions 8..11 = perm[8], perm[9],
  // perm[0], perm[1]; the last two are padding.
  Sampler s = make(10, 4, 2, 1, true, false, 3);
  ASSERT_EQ(s.stepsPerEpoch(), 3u);
  std::vector<uint64_t> perm = samplerOrdering(10, 3, 4, true);
  MicroBatchIndices g;
  ASSERT_TRUE(s.globalBatch({4, 2}, g).ok());
  EXPECT_EQ(g.indices, (std::vector<uint64_t>{perm[8], perm[9], perm[0], perm[1]}));
  EXPECT_EQ(g.padded, (std::vector<uint8_t>{0, 0, 1, 1}));
  EXPECT_EQ(g.realCount(), 2u);
  MicroBatchIndices mb;
  ASSERT_TRUE(s.microBatch({4, 2}, 0, 1, mb).ok());
  EXPECT_EQ(mb.padded, (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(mb.realCount(), 0u);

  // drop_last drops that batch instead.
  EXPECT_EQ(make(10, 4, 2, 1, true, true).stepsPerEpoch(), 2u);

  // Fewer samples than a global batch: wrap more than once.
  Sampler tiny = make(3, 8, 4, 2, false, false);
  ASSERT_EQ(tiny.stepsPerEpoch(), 1u);
  ASSERT_TRUE(tiny.globalBatch({0, 0}, g).ok());
  EXPECT_EQ(g.indices, (std::vector<uint64_t>{0, 1, 2, 0, 1, 2, 0, 1}));
  EXPECT_EQ(g.realCount(), 3u);
}

TEST(Sampler, Resume) {
  Sampler s = make(100, 10, 5, 1);
  EXPECT_EQ(s.positionOf(0), (SamplerPosition{0, 0}));
  EXPECT_EQ(s.positionOf(23), (SamplerPosition{2, 3}));
  EXPECT_EQ(s.globalStepOf({2, 3}), 23u);
  // A fresh sampler (a resumed run) gives the same batch at the same position.
  Sampler t = make(100, 10, 5, 1);
  MicroBatchIndices a, b;
  ASSERT_TRUE(s.microBatch({0, 0}, 0, 0, a).ok());
  ASSERT_TRUE(s.microBatch(s.positionOf(23), 0, 1, a).ok());
  ASSERT_TRUE(t.microBatch(t.positionOf(23), 0, 1, b).ok());
  EXPECT_EQ(a.indices, b.indices);
}

TEST(Sampler, Errors) {
  auto err = [](SamplerOptions o) { return Sampler::create(o).message(); };
  EXPECT_EQ(err({0, 8, 2, 1, 0, true, true}), "data sampler: the data set is empty; expected at least one sample");
  EXPECT_EQ(err({10, 8, 0, 1, 0, true, true}), "data sampler: batch.micro is 0; expected at least 1");
  EXPECT_EQ(err({10, 8, 2, 0, 0, true, true}), "data sampler: the world size is 0; expected at least 1");
  EXPECT_EQ(err({10, 12, 4, 2, 0, true, true}),
            "data sampler: batch.global (12) is not a multiple of batch.micro (4) x world size (2)");
  EXPECT_EQ(err({5, 8, 4, 2, 0, true, true}),
            "data sampler: the data set has 5 samples, fewer than one global batch of 8; with drop_last = true no step can run (set data.drop_last: false to pad, or use a smaller batch.global)");
  Sampler s = make(100, 10, 5, 1);
  MicroBatchIndices mb;
  EXPECT_EQ(s.microBatch({0, 10}, 0, 0, mb).message(),
            "data sampler: step 10 of epoch 0 is out of range; an epoch has 10 steps");
  EXPECT_EQ(s.microBatch({0, 0}, 1, 0, mb).message(),
            "data sampler: rank 1, micro-batch 0 is out of range; expected rank < 1 and micro-batch < 2");
}
