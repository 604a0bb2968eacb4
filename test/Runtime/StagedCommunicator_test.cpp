//===- StagedCommunicator_test.cpp - Collectives through host buffers ----===//
//
// 2 and 3 ranks in threads of this process, each with two worlds: one whose
// collectives run on Gloo directly, one whose collectives are staged
// through host buffers and the CPU's copy thread (as a CUDA rank's are
// through pinned memory). Each strategy's collectives (DDP's overlapped
// buckets, ZERO1's gather of updated shards, ZERO2's reduce-scatters,
// FULL_SHARD's prefetched gathers) must give the direct path's results bit
// for bit, and a lost rank must end a staged collective with an error that
// names it.
//
//===----------------------------------------------------------------------===//

#include "LocalWorld.h"
#include "TestUtil.h"
#include "device/HostStaging.h"
#include "dist/Bootstrap.h"
#include "dist/StagedCommunicator.h"
#include "dist/TcpStore.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

using namespace sinter::rt;

namespace {

using Floats = std::vector<float>;

/// Rank `rank`'s values for collective `which`: magnitudes spread over
/// many binades, so that a sum in another order or through another path
/// would show.
Floats valuesOf(int rank, int which, size_t n) {
  std::mt19937 gen(uint32_t(1000 * which + rank));
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  Floats v(n);
  for (float &x : v)
    x = std::ldexp(mantissa(gen), exponent(gen));
  return v;
}

/// One strategy's collectives on one rank: what they leave in its buffers.
using Pattern = std::function<std::vector<Floats>(Communicator &)>;

/// DDP: three buckets started back to back (the backward pass), waited in
/// queue in order, then on the host (the step's end).
std::vector<Floats> ddp(Communicator &comm) {
  std::vector<Floats> buckets;
  for (int b = 0; b < 3; ++b)
    buckets.push_back(valuesOf(comm.rank(), b, 1000 + 257 * size_t(b)));
  std::vector<Pending> started;
  for (Floats &b : buckets)
    started.push_back(comm.allReduce(b.data(), DType::F32, b.size(), ReduceOp::Sum));
  for (const Pending &p : started)
    EXPECT_TRUE(p.waitInQueue().ok());
  EXPECT_TRUE(waitAll(started).ok());
  return buckets;
}

/// ZERO1: a bucket's sum, then every rank's updated shard gathered.
std::vector<Floats> zero1(Communicator &comm) {
  const size_t shard = 333;
  Floats bucket = valuesOf(comm.rank(), 10, shard * size_t(comm.size()));
  EXPECT_TRUE(comm.allReduce(bucket.data(), DType::F32, bucket.size(), ReduceOp::Sum)
                  .waitInQueue()
                  .ok());
  Floats mine(bucket.begin() + long(shard) * comm.rank(),
              bucket.begin() + long(shard) * (comm.rank() + 1));
  for (float &x : mine)
    x *= 0.5f; // the update of this rank's shard
  Floats rows(shard * size_t(comm.size()));
  EXPECT_TRUE(comm.allGather(mine.data(), rows.data(), DType::F32, shard).wait().ok());
  return {bucket, rows};
}

/// ZERO2: two buckets reduce-scattered while the backward pass goes on,
/// then the update's gather.
std::vector<Floats> zero2(Communicator &comm) {
  const size_t shard = 500;
  std::vector<Floats> rows = {valuesOf(comm.rank(), 20, shard * size_t(comm.size())),
                              valuesOf(comm.rank(), 21, shard * size_t(comm.size()))};
  std::vector<Floats> shards(2, Floats(shard));
  std::vector<Pending> started;
  for (int i = 0; i < 2; ++i)
    started.push_back(comm.reduceScatter(rows[size_t(i)].data(), shards[size_t(i)].data(),
                                         DType::F32, shard, ReduceOp::Sum));
  for (const Pending &p : started)
    EXPECT_TRUE(p.waitInQueue().ok());
  EXPECT_TRUE(waitAll(started).ok());
  Floats gathered(shard * size_t(comm.size()));
  EXPECT_TRUE(comm.allGather(shards[1].data(), gathered.data(), DType::F32, shard)
                  .wait()
                  .ok());
  return {shards[0], shards[1], gathered};
}

/// FULL_SHARD: each layer's parameters gathered before use, the next
/// layer's prefetched; its gradient reduce-scattered after.
std::vector<Floats> fullShard(Communicator &comm) {
  const size_t shard = 211;
  std::vector<Floats> params, gathered, grads, gradShards;
  for (int layer = 0; layer < 3; ++layer) {
    params.push_back(valuesOf(comm.rank(), 30 + layer, shard));
    gathered.emplace_back(shard * size_t(comm.size()));
    grads.push_back(valuesOf(comm.rank(), 40 + layer, shard * size_t(comm.size())));
    gradShards.emplace_back(shard);
  }
  std::vector<Pending> all;
  Pending next = comm.allGather(params[0].data(), gathered[0].data(), DType::F32, shard);
  for (size_t layer = 0; layer < 3; ++layer) {
    Pending now = next;
    if (layer + 1 < 3)
      next = comm.allGather(params[layer + 1].data(), gathered[layer + 1].data(),
                            DType::F32, shard);
    EXPECT_TRUE(now.waitInQueue().ok());
    all.push_back(now);
  }
  for (size_t layer = 3; layer-- > 0;)
    all.push_back(comm.reduceScatter(grads[layer].data(), gradShards[layer].data(),
                                     DType::F32, shard, ReduceOp::Sum));
  EXPECT_TRUE(waitAll(all).ok());
  std::vector<Floats> out = gathered;
  out.insert(out.end(), gradShards.begin(), gradShards.end());
  return out;
}

/// The run's host values around a step: a broadcast of rank 0's
/// parameters, f64 sums of the loss and metrics, a barrier.
std::vector<Floats> hostValues(Communicator &comm) {
  Floats params = valuesOf(comm.rank(), 50, 77);
  EXPECT_TRUE(comm.broadcast(params.data(), DType::F32, params.size(), 0).wait().ok());
  std::vector<double> sums = {1.0 / (comm.rank() + 3), 1e-9 * comm.rank()};
  EXPECT_TRUE(comm.allReduce(sums.data(), DType::F64, 2, ReduceOp::Sum).wait().ok());
  EXPECT_TRUE(comm.barrier().wait().ok());
  return {params, Floats{float(sums[0]), float(sums[1])}};
}

/// Runs `pattern` on every rank of two `ranks`-rank worlds, one direct and
/// one staged, and compares each rank's buffers bit for bit.
void compareDirectAndStaged(int ranks, const Pattern &pattern) {
  // Two ports the system found free, not the one next to the first: the
  // direct world's connections take nearby ephemeral ports, and one holding
  // that port kept the staged world's store from starting.
  int directPort = test::freeLoopbackPort();
  int stagedPort = test::freeLoopbackPort();
  for (int tries = 0; tries < 100 && stagedPort == directPort; ++tries)
    stagedPort = test::freeLoopbackPort();
  ASSERT_NE(stagedPort, directPort);
  test::onRanks(ranks, [&](int r) {
    Expected<std::unique_ptr<Communicator>> direct =
        test::connectLocal(r, ranks, directPort, 20);
    ASSERT_TRUE(direct.ok()) << direct.message();
    std::vector<Floats> want = pattern(**direct);

    Expected<std::unique_ptr<Communicator>> host = test::connectLocal(r, ranks, stagedPort, 20);
    ASSERT_TRUE(host.ok()) << host.message();
    std::unique_ptr<StagingQueues> queues = createHostStagingQueues();
    std::unique_ptr<StagedCommunicator> staged =
        createStagedCommunicator(host.take(), *queues, "test buffers");
    EXPECT_EQ(staged->engine(), "Gloo over TCP, through test buffers");
    std::vector<Floats> got = pattern(*staged);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_EQ(0, std::memcmp(got[i].data(), want[i].data(), got[i].size() * sizeof(float)))
          << "rank " << r << ", buffer " << i;
    EXPECT_GT(staged->stagedBytes(), 0u);
  });
}

class StagedCollectives : public ::testing::TestWithParam<int> {};

TEST_P(StagedCollectives, DdpBucketsAsDirect) { compareDirectAndStaged(GetParam(), ddp); }
TEST_P(StagedCollectives, Zero1AsDirect) { compareDirectAndStaged(GetParam(), zero1); }
TEST_P(StagedCollectives, Zero2AsDirect) { compareDirectAndStaged(GetParam(), zero2); }
TEST_P(StagedCollectives, FullShardAsDirect) {
  compareDirectAndStaged(GetParam(), fullShard);
}
TEST_P(StagedCollectives, HostValuesAsDirect) {
  compareDirectAndStaged(GetParam(), hostValues);
}

INSTANTIATE_TEST_SUITE_P(Ranks, StagedCollectives, ::testing::Values(2, 3),
                         [](const auto &info) { return std::to_string(info.param) + "Ranks"; });

// Host buffers are reused: a second step of the same collectives holds no
// more than the first.
TEST(StagedCommunicatorBuffers, ReusedFromStepToStep) {
  int port = test::freeLoopbackPort();
  test::onRanks(2, [&](int r) {
    Expected<std::unique_ptr<Communicator>> host = test::connectLocal(r, 2, port, 20);
    ASSERT_TRUE(host.ok()) << host.message();
    std::unique_ptr<StagingQueues> queues = createHostStagingQueues();
    auto staged = createStagedCommunicator(host.take(), *queues, "test buffers");
    ddp(*staged);
    uint64_t first = staged->stagedBytes();
    ddp(*staged);
    EXPECT_EQ(staged->stagedBytes(), first);
  });
}

// A rank that leaves in the middle of the run: the other's staged
// collective fails within the deadline, naming it, instead of hanging.
TEST(StagedCommunicatorBuffers, LostRankIsNamed) {
  int port = test::freeLoopbackPort();
  std::string error;
  test::onRanks(2, [&](int r) {
    Expected<std::unique_ptr<Communicator>> host = test::connectLocal(r, 2, port, 5);
    ASSERT_TRUE(host.ok()) << host.message();
    std::unique_ptr<StagingQueues> queues = createHostStagingQueues();
    auto staged = createStagedCommunicator(host.take(), *queues, "test buffers");
    EXPECT_TRUE(staged->barrier().wait().ok());
    if (r == 1)
      return; // leaves: its connections close
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    Floats bucket(1000, 1.0f);
    error = staged->allReduce(bucket.data(), DType::F32, bucket.size(), ReduceOp::Sum)
                .wait()
                .message();
  });
  EXPECT_NE(error.find("rank 0 of 2: all-reduce failed: lost rank 1"), std::string::npos)
      << error;
}

/// Host staging queues whose host buffers run out past `limit` bytes.
class ScarceQueues final : public StagingQueues {
public:
  explicit ScarceQueues(uint64_t limit) : limit(limit) {}
  Expected<void *> allocateHost(uint64_t bytes) override {
    if (bytes > limit)
      return Status::error("no host memory for " + std::to_string(bytes) + " bytes");
    return inner->allocateHost(bytes);
  }
  void releaseHost(void *p) override { inner->releaseHost(p); }
  Expected<Mark> markStep() override { return inner->markStep(); }
  Expected<Mark> download(void *h, const void *d, uint64_t n, const Mark &m) override {
    return inner->download(h, d, n, m);
  }
  Expected<Mark> upload(void *d, const void *h, uint64_t n, const Mark &m) override {
    return inner->upload(d, h, n, m);
  }
  Status waitHost(const Mark &m) override { return inner->waitHost(m); }
  Status waitStep(const Mark &m) override { return inner->waitStep(m); }
  bool passed(const Mark &m) override { return inner->passed(m); }
  bool isDeviceMemory(const void *p) const override { return inner->isDeviceMemory(p); }

private:
  uint64_t limit;
  std::unique_ptr<StagingQueues> inner = createHostStagingQueues();
};

// A collective that cannot start (no host buffer) fails in its turn, and
// every later one with it: the rank is out of step with the others.
TEST(StagedCommunicatorBuffers, AFailureToStartFailsWhatFollows) {
  ScarceQueues queues(1024);
  auto staged = createStagedCommunicator(createLocalCommunicator(), queues, "test buffers");
  Floats small(16, 1.0f), large(1000, 1.0f);
  EXPECT_TRUE(staged->allReduce(small.data(), DType::F32, 16, ReduceOp::Sum).wait().ok());
  Status failed = staged->allReduce(large.data(), DType::F32, 1000, ReduceOp::Sum).wait();
  EXPECT_NE(failed.message().find("rank 0 of 1: all-reduce through host memory: no host "
                                  "memory for 4000 bytes"),
            std::string::npos)
      << failed.message();
  EXPECT_EQ(staged->allReduce(small.data(), DType::F32, 16, ReduceOp::Sum).wait().message(),
            failed.message());
  EXPECT_EQ(staged->barrier().wait().message(), failed.message());
}

// The rendezvous records the first rank whose connection ended.
TEST(TcpStore, RecordsTheRankThatLeft) {
  int port = test::freeLoopbackPort();
  TcpStoreServer server(port);
  TcpStore zero("127.0.0.1", port, std::chrono::seconds(5));
  zero.announce(0);
  EXPECT_EQ(zero.departed(), "");
  {
    TcpStore one("127.0.0.1", port, std::chrono::seconds(5));
    one.announce(1);
    EXPECT_EQ(zero.departed(), "");
  }
  std::string gone;
  for (int tries = 0; tries < 200 && gone.empty(); ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    gone = zero.departed();
  }
  EXPECT_EQ(gone, "rank 1 (127.0.0.1)");
}

// A client whose server is gone learns that it lost rank 0.
TEST(TcpStore, ServerGoneIsRankZero) {
  int port = test::freeLoopbackPort();
  auto server = std::make_unique<TcpStoreServer>(port);
  TcpStore one("127.0.0.1", port, std::chrono::seconds(5));
  one.announce(1);
  server.reset();
  EXPECT_EQ(one.departed(), "rank 0 (127.0.0.1)");
}

} // namespace
