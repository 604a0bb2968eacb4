//===- AttentionF32_test.cpp - The fused f32 attention kernels, on the host -===//
//
// The CUDA device's f32 attention (cuda/kernels/AttentionF32Kernels.h) run
// here, each block's 128 threads as host threads with the block's barrier
// and the warps' shuffles emulated, over the packed layouts abi.h's calls
// give it. Its output, log-sum-exps and gradients are held against a
// float64 reference, to a few times the error of the textbook float32
// formula (scores in memory, a softmax, two matmuls) on the same inputs.
//
//===----------------------------------------------------------------------===//

#include "cuda/kernels/AttentionF32Kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

using namespace sinter::rt::cuda::kernels;

namespace {

/// A reusable barrier for `count` threads.
class Barrier {
public:
  explicit Barrier(int count = 32) : count(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex);
    int generation = passed;
    if (++waiting == count) {
      waiting = 0;
      ++passed;
      woken.notify_all();
      return;
    }
    woken.wait(lock, [&] { return passed != generation; });
  }

private:
  std::mutex mutex;
  std::condition_variable woken;
  int count, waiting = 0, passed = 0;
};

/// What a block's threads share: its barrier, its warps' and their
/// shuffles' slots.
struct HostBlock {
  Barrier block{kThreads};
  Barrier warps[kThreads / 32];
  float exchange[kThreads];
};

/// AttentionF32Kernels.h's Thread, on the host.
struct HostThread {
  int thread, blockX, blockY, gridY;
  HostBlock *block;
  void sync() { block->block.wait(); }
  float shuffleXor(float v, int mask) {
    Barrier &warp = block->warps[thread / 32];
    block->exchange[thread] = v;
    warp.wait();
    float other = block->exchange[(thread & ~31) | ((thread & 31) ^ mask)];
    warp.wait(); // every lane has read before the next shuffle writes
    return other;
  }
};

/// Runs `body(thread, shared)` over a grid of gridX x gridY blocks of
/// kThreads threads, one block at a time, with `sharedFloats` of shared
/// memory filled with NaN (a read before a write shows), and after them a
/// guard that no block may write.
template <typename Body>
void runGrid(int64_t gridX, int gridY, int sharedFloats, Body body) {
  constexpr int kGuard = 256;
  constexpr float kUntouched = -1234.5f;
  for (int y = 0; y < gridY; ++y)
    for (int64_t x = 0; x < gridX; ++x) {
      HostBlock block;
      std::vector<float> shared(size_t(sharedFloats), NAN);
      shared.resize(size_t(sharedFloats + kGuard), kUntouched);
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          HostThread th{t, int(x), y, gridY, &block};
          body(th, shared.data());
        });
      for (std::thread &t : threads)
        t.join();
      EXPECT_EQ(std::count(shared.begin() + sharedFloats, shared.end(), kUntouched), kGuard)
          << "block (" << x << ", " << y << ") wrote past its shared memory";
    }
}

struct Shape {
  int batch, heads, t, d;
  bool causal;
  int64_t c() const { return int64_t(heads) * d; }
};

/// One (batch, head)'s attention and its gradients, in T: the textbook
/// formula. q, k, v, gradO index [t][d] with row strides; writes o, lse,
/// and the three gradients [t][d] packed.
template <typename T>
void textbook(const Shape &s, const float *q, const float *k, const float *v, int64_t row,
              const float *gradO, int64_t outRow, std::vector<T> &o, std::vector<T> &lse,
              std::vector<T> &dq, std::vector<T> &dk, std::vector<T> &dv) {
  const int n = s.t, d = s.d;
  const T scale = T(1) / std::sqrt(T(d));
  std::vector<T> p(size_t(n) * n), dp(size_t(n) * n);
  o.assign(size_t(n) * d, 0);
  lse.assign(n, 0);
  dq.assign(size_t(n) * d, 0);
  dk.assign(size_t(n) * d, 0);
  dv.assign(size_t(n) * d, 0);
  for (int i = 0; i < n; ++i) {
    T maximum = -INFINITY;
    for (int j = 0; j < n; ++j) {
      T dot = 0;
      for (int e = 0; e < d; ++e)
        dot += T(q[i * row + e]) * T(k[j * row + e]);
      p[i * n + j] = s.causal && j > i ? T(-INFINITY) : dot * scale;
      maximum = std::max(maximum, p[i * n + j]);
    }
    T sum = 0;
    for (int j = 0; j < n; ++j)
      sum += p[i * n + j] = std::exp(p[i * n + j] - maximum);
    lse[i] = maximum + std::log(sum);
    for (int j = 0; j < n; ++j)
      p[i * n + j] /= sum;
    for (int j = 0; j < n; ++j)
      for (int e = 0; e < d; ++e)
        o[i * d + e] += p[i * n + j] * T(v[j * row + e]);
  }
  for (int i = 0; i < n; ++i) {
    T rowSum = 0;
    for (int j = 0; j < n; ++j) {
      T dot = 0;
      for (int e = 0; e < d; ++e)
        dot += T(gradO[i * outRow + e]) * T(v[j * row + e]);
      dp[i * n + j] = dot;
      rowSum += dot * p[i * n + j];
    }
    for (int j = 0; j < n; ++j) {
      T ds = p[i * n + j] * (dp[i * n + j] - rowSum) * scale;
      for (int e = 0; e < d; ++e) {
        dq[i * d + e] += ds * T(k[j * row + e]);
        dk[j * d + e] += ds * T(q[i * row + e]);
        dv[j * d + e] += p[i * n + j] * T(gradO[i * outRow + e]);
      }
    }
  }
}

/// The kernels' calls for one shape, as the CUDA device makes them.
template <int D>
void runKernels(const Shape &s, AttentionArgs &a) {
  const int pairs = s.batch * s.heads, tiles = tilesOf(s.t);
  runGrid(pairs, tiles, forwardSharedFloats<D>(),
          [&](HostThread &th, float *shared) { attentionForward<D>(th, a, shared); });
  const int64_t rows = int64_t(pairs) * s.t;
  runGrid(deltaBlocks(rows), 1, 0,
          [&](HostThread &th, float *) { attentionDelta<D>(th, a, rows); });
  runGrid(pairs, tiles, keyValueSharedFloats<D>(),
          [&](HostThread &th, float *shared) { attentionBackwardKeys<D>(th, a, shared); });
  runGrid(pairs, tiles, querySharedFloats<D>(),
          [&](HostThread &th, float *shared) { attentionBackwardQueries<D>(th, a, shared); });
}

/// The largest |x - reference| over the largest |reference|.
struct Error {
  double worst = 0, scale = 0;
  void add(double x, double reference) {
    worst = std::max(worst, std::fabs(x - reference));
    scale = std::max(scale, std::fabs(reference));
  }
  double relative() const { return scale > 0 ? worst / scale : worst; }
};

void check(const Shape &s) {
  SCOPED_TRACE(::testing::Message() << "batch " << s.batch << ", heads " << s.heads << ", t "
                                    << s.t << ", d " << s.d << (s.causal ? ", causal" : ""));
  const int64_t c = s.c(), qkvRow = 3 * c;
  std::mt19937 rng(uint32_t(s.t * 131 + s.d));
  // Scores of a few units, as trained attention has.
  std::normal_distribution<float> normal(0.f, 1.5f);
  std::vector<float> qkv(size_t(s.batch) * s.t * qkvRow), gradO(size_t(s.batch) * s.t * c);
  for (float &x : qkv)
    x = normal(rng);
  for (float &x : gradO)
    x = normal(rng);
  std::vector<float> o(gradO.size(), NAN), lse(size_t(s.batch) * s.heads * s.t, NAN),
      delta(lse.size(), NAN), gradQkv(qkv.size(), NAN);

  AttentionArgs a{};
  a.q = qkv.data();
  a.k = qkv.data() + c;
  a.v = qkv.data() + 2 * c;
  a.o = o.data();
  a.lse = lse.data();
  a.gradO = gradO.data();
  a.gradQ = gradQkv.data();
  a.gradK = gradQkv.data() + c;
  a.gradV = gradQkv.data() + 2 * c;
  a.delta = delta.data();
  a.qkv = {s.t * qkvRow, s.d, qkvRow};
  a.out = {s.t * c, s.d, c};
  a.heads = s.heads;
  a.t = s.t;
  a.causal = s.causal;
  a.scale = 1.f / std::sqrt(float(s.d));
  if (s.d == 32)
    runKernels<32>(s, a);
  else
    runKernels<64>(s, a);

  // Per output: the kernels' error and the textbook f32 formula's, both
  // against float64.
  Error fused[5], plain[5];
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads; ++h) {
      const int64_t in = b * s.t * qkvRow + h * s.d, out = b * s.t * c + h * s.d;
      std::vector<double> o64, lse64, dq64, dk64, dv64;
      std::vector<float> o32, lse32, dq32, dk32, dv32;
      textbook(s, &qkv[in], &qkv[in + c], &qkv[in + 2 * c], qkvRow, &gradO[out], c, o64,
               lse64, dq64, dk64, dv64);
      textbook(s, &qkv[in], &qkv[in + c], &qkv[in + 2 * c], qkvRow, &gradO[out], c, o32,
               lse32, dq32, dk32, dv32);
      for (int t = 0; t < s.t; ++t) {
        const int64_t stat = (int64_t(b) * s.heads + h) * s.t + t;
        fused[1].add(lse[stat], lse64[t]);
        plain[1].add(lse32[t], lse64[t]);
        for (int e = 0; e < s.d; ++e) {
          const int64_t at = t * s.d + e, row = in + t * qkvRow + e;
          fused[0].add(o[out + t * c + e], o64[at]);
          plain[0].add(o32[at], o64[at]);
          fused[2].add(gradQkv[row], dq64[at]);
          plain[2].add(dq32[at], dq64[at]);
          fused[3].add(gradQkv[row + c], dk64[at]);
          plain[3].add(dk32[at], dk64[at]);
          fused[4].add(gradQkv[row + 2 * c], dv64[at]);
          plain[4].add(dv32[at], dv64[at]);
        }
      }
    }
  const char *names[5] = {"o", "lse", "dq", "dk", "dv"};
  for (int i = 0; i < 5; ++i) {
    SCOPED_TRACE(names[i]);
    // NaN fails both: every element was written.
    EXPECT_LE(fused[i].relative(), 4 * plain[i].relative() + 1e-7)
        << "fused " << fused[i].relative() << ", textbook f32 " << plain[i].relative();
  }
}

TEST(AttentionF32, CausalOverWholeTiles) { check({2, 2, 128, 64, true}); }
TEST(AttentionF32, CausalOverAPartialTile) { check({1, 3, 80, 64, true}); }
TEST(AttentionF32, UnmaskedOverThreeTiles) { check({1, 2, 150, 32, false}); }
TEST(AttentionF32, ShorterThanATile) { check({2, 1, 7, 32, true}); }

} // namespace
