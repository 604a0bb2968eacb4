//===- Prefetcher_test.cpp - Background micro-batch assembly --------------===//

#include "data/Prefetcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

using namespace sinter::rt;

namespace {

/// Sample i is the single int64 i; optionally fails on the `failAt`-th
/// gather, and counts gathers.
class FakeSource : public BatchSource {
public:
  FakeSource(uint64_t n, int failAt = -1) : n(n), failAt(failAt) {
    specs.push_back({"x", DType::I64, {}});
  }
  uint64_t numSamples() const override { return n; }
  const std::vector<InputSpec> &inputs() const override { return specs; }
  Status gather(const std::vector<uint64_t> &ids, std::vector<HostTensor> &out) const override {
    if (gathers++ == failAt)
      return Status::error("x.npy: simulated read failure");
    out.resize(1);
    out[0].name = "x";
    out[0].dtype = DType::I64;
    out[0].shape = {ids.size()};
    out[0].bytes.resize(ids.size() * 8);
    for (size_t i = 0; i < ids.size(); ++i) {
      int64_t v = (int64_t)ids[i];
      std::memcpy(out[0].bytes.data() + 8 * i, &v, 8);
    }
    return Status::success();
  }
  mutable std::atomic<int> gathers{0};

private:
  uint64_t n;
  int failAt;
  std::vector<InputSpec> specs;
};

Sampler makeSampler(uint64_t n, uint64_t g, uint64_t b, uint64_t w) {
  Expected<Sampler> s = Sampler::create({n, g, b, w, 11, true, false});
  EXPECT_TRUE(s.ok()) << s.message();
  return s.take();
}

std::vector<int64_t> values(const MicroBatch &mb) {
  std::vector<int64_t> v(mb.tensors[0].bytes.size() / 8);
  std::memcpy(v.data(), mb.tensors[0].bytes.data(), v.size() * 8);
  return v;
}

} // namespace

TEST(Prefetcher, DeliversTheSamplersOrder) {
  // 2 ranks, k = 2, b = 3, 25 samples: 3 steps per epoch; rank 1's view.
  Sampler reference = makeSampler(25, 12, 3, 2);
  auto src = std::make_shared<FakeSource>(25);
  PrefetcherOptions opts;
  opts.rank = 1;
  opts.depth = 2;
  opts.numSteps = 7; // crosses two epoch boundaries
  Expected<std::unique_ptr<Prefetcher>> p = Prefetcher::start(makeSampler(25, 12, 3, 2), src, opts);
  ASSERT_TRUE(p.ok()) << p.message();
  for (uint64_t step = 0; step < 7; ++step)
    for (uint64_t m = 0; m < 2; ++m) {
      Expected<MicroBatch> mb = (*p)->next();
      ASSERT_TRUE(mb.ok()) << mb.message();
      SamplerPosition pos = reference.positionOf(step);
      EXPECT_EQ(mb->position, pos);
      EXPECT_EQ(mb->micro, m);
      MicroBatchIndices want;
      ASSERT_TRUE(reference.microBatch(pos, 1, m, want).ok());
      EXPECT_EQ(mb->samples.indices, want.indices);
      EXPECT_EQ(mb->samples.padded, want.padded);
      std::vector<int64_t> got = values(*mb);
      EXPECT_EQ(std::vector<uint64_t>(got.begin(), got.end()), want.indices);
    }
  EXPECT_EQ((*p)->next().message(),
            "prefetcher: all 7 steps were delivered; next() was called past the end");
}

TEST(Prefetcher, ResumesAtAPosition) {
  Sampler reference = makeSampler(40, 8, 4, 1);
  PrefetcherOptions opts;
  opts.start = {3, 2};
  Expected<std::unique_ptr<Prefetcher>> p =
      Prefetcher::start(makeSampler(40, 8, 4, 1), std::make_shared<FakeSource>(40), opts);
  ASSERT_TRUE(p.ok());
  Expected<MicroBatch> mb = (*p)->next();
  ASSERT_TRUE(mb.ok());
  EXPECT_EQ(mb->position, (SamplerPosition{3, 2}));
  MicroBatchIndices want;
  ASSERT_TRUE(reference.microBatch({3, 2}, 0, 0, want).ok());
  EXPECT_EQ(mb->samples.indices, want.indices);
}

TEST(Prefetcher, ErrorsReachTheConsumerInOrder) {
  auto src = std::make_shared<FakeSource>(20, /*failAt=*/3);
  Expected<std::unique_ptr<Prefetcher>> p =
      Prefetcher::start(makeSampler(20, 4, 2, 1), src, PrefetcherOptions());
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE((*p)->next().ok()) << "batches gathered before the failure arrive first";
  std::string want = "data, epoch 0 step 1 micro-batch 1: x.npy: simulated read failure";
  EXPECT_EQ((*p)->next().message(), want);
  EXPECT_EQ((*p)->next().message(), want) << "and it stays failed";
}

TEST(Prefetcher, BoundedQueue) {
  auto src = std::make_shared<FakeSource>(1000);
  PrefetcherOptions opts;
  opts.depth = 3;
  Expected<std::unique_ptr<Prefetcher>> p = Prefetcher::start(makeSampler(1000, 4, 2, 1), src, opts);
  ASSERT_TRUE(p.ok());
  auto waitFor = [&](int n) {
    for (int i = 0; i < 500 && src->gathers.load() < n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  };
  waitFor(3);
  EXPECT_EQ(src->gathers.load(), 3) << "the producer stops when 3 are queued";
  ASSERT_TRUE((*p)->next().ok());
  waitFor(4);
  EXPECT_EQ(src->gathers.load(), 4) << "and gathers one more when one is taken";
}

TEST(Prefetcher, ShutdownNeverHangs) {
  // Producer blocked on a full queue; destroyed without consuming.
  {
    PrefetcherOptions opts;
    opts.depth = 1;
    Expected<std::unique_ptr<Prefetcher>> p =
        Prefetcher::start(makeSampler(100, 4, 2, 1), std::make_shared<FakeSource>(100), opts);
    ASSERT_TRUE(p.ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Consumer blocked (nothing will come: the data ran out); stopped from
  // another thread.
  {
    PrefetcherOptions opts;
    opts.numSteps = 0;
    Expected<std::unique_ptr<Prefetcher>> p =
        Prefetcher::start(makeSampler(100, 4, 2, 1), std::make_shared<FakeSource>(100), opts);
    ASSERT_TRUE(p.ok());
    EXPECT_FALSE((*p)->next().ok());
  }
  {
    PrefetcherOptions opts;
    opts.depth = 1;
    Expected<std::unique_ptr<Prefetcher>> p =
        Prefetcher::start(makeSampler(100, 4, 2, 1), std::make_shared<FakeSource>(100), opts);
    ASSERT_TRUE(p.ok());
    Prefetcher *raw = p->get();
    std::thread stopper([raw] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      raw->stop();
    });
    // Drain until the stop lands; next() must return (an error) once it has.
    bool sawStop = false;
    for (int i = 0; i < 1000000 && !sawStop; ++i) {
      Expected<MicroBatch> mb = raw->next();
      if (!mb.ok()) {
        EXPECT_EQ(mb.message(), "prefetcher: next() after stop()");
        sawStop = true;
      }
    }
    stopper.join();
    EXPECT_TRUE(sawStop);
    raw->stop(); // idempotent
  }
}

TEST(Prefetcher, StartErrors) {
  auto src = std::make_shared<FakeSource>(10);
  EXPECT_EQ(Prefetcher::start(makeSampler(12, 4, 2, 1), src, PrefetcherOptions()).message(),
            "prefetcher: the sampler counts 12 samples but the data source has 10");
  PrefetcherOptions opts;
  opts.depth = 0;
  EXPECT_EQ(Prefetcher::start(makeSampler(10, 4, 2, 1), src, opts).message(),
            "prefetcher: depth is 0; expected at least 1 micro-batch ahead");
  opts.depth = 1;
  opts.rank = 2;
  EXPECT_EQ(Prefetcher::start(makeSampler(10, 4, 2, 2), src, opts).message(),
            "prefetcher: rank 2 is out of range for world size 2");
  opts.rank = 0;
  opts.start = {0, 3};
  EXPECT_EQ(Prefetcher::start(makeSampler(10, 4, 2, 1), src, opts).message(),
            "prefetcher: resume step 3 is out of range; an epoch has 3 steps");
}
