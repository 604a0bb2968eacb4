//===- AttentionLayout_test.cpp - Attention calls cut into batch slices ---===//
//
// The CUDA device runs a fused attention call whose workspace would be too
// large over slices of its batch: each slice a call of the slice's batch at
// the operands' bases advanced by attentionBatchOffsets. Here the host's
// answer to the same calls stands in for cuDNN: the slices' calls must give
// the whole call's bits, in both layouts.
//
//===----------------------------------------------------------------------===//

#include "cudaonhost/AttentionOnHost.h"
#include "device/AttentionLayout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

using namespace sinter::rt;

namespace {

TEST(AttentionSliceBatch, WholeBatchWhenItsWorkspaceFits) {
  EXPECT_EQ(attentionSliceBatch(64, 256 << 20, 256 << 20), 64);
  EXPECT_EQ(attentionSliceBatch(1, int64_t(1) << 40, 1), 1);
}

TEST(AttentionSliceBatch, LargestDivisorWithinTheLimit) {
  // GPT-2 124M at micro-batch 64: 12 heads x 1024 x 1024 bf16 a sequence.
  const int64_t perSequence = 12 * 1024 * 1024 * 2;
  EXPECT_EQ(attentionSliceBatch(64, 64 * perSequence, 256 << 20), 8);
  EXPECT_EQ(attentionSliceBatch(12, 12 * int64_t(100), 500), 4);
  EXPECT_EQ(attentionSliceBatch(12, 12 * int64_t(100), 599), 4);
  EXPECT_EQ(attentionSliceBatch(12, 12 * int64_t(100), 600), 6);
  // A prime batch has no slice but 1; one sequence over the limit still runs.
  EXPECT_EQ(attentionSliceBatch(7, 7 * int64_t(100), 500), 1);
  EXPECT_EQ(attentionSliceBatch(4, 4 * int64_t(100), 50), 1);
}

/// Random bf16 or f32 values in [-2, 2).
template <typename T> std::vector<T> randomValues(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<T> out(n);
  for (T &v : out) {
    float f = dist(gen);
    if constexpr (sizeof(T) == 2) {
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      v = uint16_t(bits >> 16);
    } else {
      v = f;
    }
  }
  return out;
}

/// `p` advanced by `bytes`.
template <typename T> T *at(T *p, int64_t bytes) {
  return reinterpret_cast<T *>(reinterpret_cast<char *>(p) + bytes);
}

/// One call's operands, laid out as `shape` says, q, k and v in one buffer
/// (the packed layout's projection, or three blocks for heads-major).
template <typename T> struct Operands {
  AttentionShape shape;
  int64_t kBase, vBase, oSize;
  std::vector<T> qkv, o, gradO, gradQkv;
  std::vector<float> stats;

  Operands(const AttentionShape &s, bool packed) : shape(s) {
    int64_t qSize = s.batch * s.q.batch, kSize = s.batch * s.k.batch;
    kBase = packed ? s.heads * s.d : qSize;
    vBase = packed ? 2 * s.heads * s.d : qSize + kSize;
    int64_t all = packed ? qSize : qSize + kSize + s.batch * s.v.batch;
    oSize = s.batch * s.o.batch;
    qkv = randomValues<T>(size_t(all), 1);
    gradO = randomValues<T>(size_t(oSize), 2);
    o.assign(size_t(oSize), T());
    stats.assign(size_t(s.batch * s.heads * s.tq), 0.0f);
    gradQkv.assign(qkv.size(), T());
  }

  /// The forward and backward calls over batch elements [first, first +
  /// size), as the device's slices make them.
  void run(int64_t first, int64_t size) {
    AttentionShape slice = shape;
    slice.batch = size;
    AttentionOffsets off = attentionBatchOffsets(shape, first, sizeof(T));
    T *q = at(qkv.data(), off.q), *k = at(qkv.data() + kBase, off.k),
      *v = at(qkv.data() + vBase, off.v);
    T *gq = at(gradQkv.data(), off.q), *gk = at(gradQkv.data() + kBase, off.k),
      *gv = at(gradQkv.data() + vBase, off.v);
    float *st = at(stats.data(), off.stats);
    cudaonhost::attentionForward(slice, q, k, v, at(o.data(), off.o), st);
    cudaonhost::attentionBackward(slice, q, k, v, at(o.data(), off.o), st,
                                  at(gradO.data(), off.o), gq, gk, gv);
  }
};

template <typename T> void expectSlicesGiveTheWholeCall(const AttentionShape &s, bool packed) {
  Operands<T> whole(s, packed), sliced(s, packed);
  whole.run(0, s.batch);
  const int64_t size = attentionSliceBatch(s.batch, s.batch * 100, 200);
  ASSERT_EQ(size, 2);
  for (int64_t first = 0; first < s.batch; first += size)
    sliced.run(first, size);
  EXPECT_EQ(whole.o, sliced.o);
  EXPECT_EQ(whole.stats, sliced.stats);
  EXPECT_EQ(whole.gradQkv, sliced.gradQkv);
  // The calls write the gradients: ones left at zero would agree between
  // two runs that both missed them. (Causally, each first query's gradient
  // is zero: it sees one key, with probability 1.)
  size_t zeros = 0;
  for (T g : whole.gradQkv)
    zeros += g == T();
  EXPECT_LT(zeros, whole.gradQkv.size() / 10);
}

TEST(AttentionSlices, PackedBf16GivesTheWholeCall) {
  expectSlicesGiveTheWholeCall<uint16_t>(packedAttention(6, 9, 3, 8, /*causal=*/true), true);
}

TEST(AttentionSlices, PackedF32GivesTheWholeCall) {
  expectSlicesGiveTheWholeCall<float>(packedAttention(4, 7, 2, 16, /*causal=*/false), true);
}

TEST(AttentionSlices, HeadsMajorGivesTheWholeCall) {
  expectSlicesGiveTheWholeCall<uint16_t>(headsMajorAttention(6, 2, 5, 11, 8, 16, false),
                                         false);
  expectSlicesGiveTheWholeCall<float>(headsMajorAttention(4, 3, 6, 6, 8, 8, true), false);
}

} // namespace
