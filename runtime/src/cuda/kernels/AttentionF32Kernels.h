//===- AttentionF32Kernels.h - Fused f32 attention, one tile at a time ----===//
//
// abi.h's packed self-attention in f32, for every (batch, head): o =
// softmax(q k^T / sqrt(d)) v, causally masked when asked, and its gradient,
// without the T x T scores ever reaching memory (cuDNN's fused attention
// takes no f32). q, k and v are read where the packed projection holds
// them, o and the gradients written in place, through strides.
//
// A block of 128 threads owns a tile of 64 rows (queries, or keys in the
// backward pass's dk/dv kernel) of one (batch, head) pair, the pair its
// grid column and the tile its row, and walks the other side's tiles of 64:
// each
// product of two tiles goes through shared memory, each thread computing 4
// rows by 8 columns of it (columns c, c + 1, c + 2, c + 3 and the same plus
// 32, from c = 4 * (thread % 8)), so the 8 threads of a row sit in one warp
// and reduce it with shuffles. The forward pass keeps each row's running
// maximum and sum (online softmax) and writes its log-sum-exp; the backward
// pass reads it back, and computes dk and dv in one kernel and dq in
// another, each summing in a fixed order: the gradients are deterministic,
// with no atomics.
//
// The bodies are templates over a `Thread` that says who runs them and how
// they synchronize: AttentionF32.cu gives CUDA's, and the runtime's tests
// give one that runs a block's threads on the host, so the same code is
// checked against a float64 reference where there is no GPU.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_CUDA_KERNELS_ATTENTIONF32KERNELS_H
#define SINTER_RT_CUDA_KERNELS_ATTENTIONF32KERNELS_H

#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define SINTER_KERNEL_INLINE __device__ __forceinline__
#else
#define SINTER_KERNEL_INLINE inline
#endif

namespace sinter::rt::cuda::kernels {

/// A tile's rows, and the threads of a block.
constexpr int kTile = 64;
constexpr int kThreads = 128;

/// Where the elements of one of the packed tensors lie: element (b, h, t, i)
/// at base + b * batch + h * head + t * row + i.
struct Strided {
  int64_t batch, head, row;
};

/// One call's tensors and shape. q, k and v (and dq, dk, dv) are the packed
/// projection's three blocks; o and dO share one layout; lse and delta are
/// [batch, heads, t], packed.
struct AttentionArgs {
  const float *q, *k, *v;
  float *o, *lse;
  const float *gradO;
  float *gradQ, *gradK, *gradV, *delta;
  Strided qkv, out;
  int heads, t, causal;
  float scale; ///< 1 / sqrt(d)
};

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

#ifdef __CUDACC__
SINTER_KERNEL_INLINE float exp2Of(float x) { return exp2f(x); }
SINTER_KERNEL_INLINE float log2Of(float x) { return log2f(x); }
SINTER_KERNEL_INLINE float maxOf(float x, float y) { return fmaxf(x, y); }
#else
inline float exp2Of(float x) { return std::exp2(x); }
inline float log2Of(float x) { return std::log2(x); }
inline float maxOf(float x, float y) { return std::fmax(x, y); }
#endif

/// Four floats, loaded and stored as one 16-byte access.
struct alignas(16) Quad {
  float x[4];
};

#ifdef __CUDACC__
SINTER_KERNEL_INLINE Quad loadQuad(const float *p) { return *reinterpret_cast<const Quad *>(p); }
SINTER_KERNEL_INLINE void storeQuad(float *p, const Quad &v) {
  *reinterpret_cast<Quad *>(p) = v;
}
#else
inline Quad loadQuad(const float *p) {
  Quad v;
  std::memcpy(v.x, p, sizeof v.x);
  return v;
}
inline void storeQuad(float *p, const Quad &v) { std::memcpy(p, v.x, sizeof v.x); }
#endif

/// The tile column (0..63) of a thread's j-th column (0..7): two runs of 4.
SINTER_KERNEL_INLINE int tileColumn(int group, int j) { return (j >> 2) * 32 + group * 4 + (j & 3); }

/// Where the (batch, head) pair of block row `bh` starts in `s`.
SINTER_KERNEL_INLINE int64_t headOffset(const Strided &s, int bh, int heads) {
  return int64_t(bh / heads) * s.batch + int64_t(bh % heads) * s.head;
}

/// Reduces `v` over the 8 threads of a row (lanes differing in their low 3
/// bits) with `op`.
template <typename Thread, typename Op>
SINTER_KERNEL_INLINE float rowReduce(Thread &th, float v, Op op) {
  for (int mask = 1; mask < 8; mask <<= 1)
    v = op(v, th.shuffleXor(v, mask));
  return v;
}

/// Copies rows [first, first + 64) of one head (D columns) into shared
/// memory transposed, `to[d * 64 + r]`, with zeros past `t`. Consecutive
/// threads take consecutive rows, so the stores fall in distinct banks.
template <int D, typename Thread>
SINTER_KERNEL_INLINE void loadTransposed(Thread &th, const float *head, int64_t rowStride,
                                         int first, int t, float *to) {
  for (int at = th.thread; at < kTile * D / 4; at += kThreads) {
    int r = at % kTile, d = (at / kTile) * 4;
    Quad v = {{0, 0, 0, 0}};
    if (first + r < t)
      v = loadQuad(head + int64_t(first + r) * rowStride + d);
    for (int i = 0; i < 4; ++i)
      to[(d + i) * kTile + r] = v.x[i];
  }
}

/// The same rows as they are, `to[r * D + d]`.
template <int D, typename Thread>
SINTER_KERNEL_INLINE void loadRows(Thread &th, const float *head, int64_t rowStride, int first,
                                   int t, float *to) {
  for (int at = th.thread; at < kTile * D / 4; at += kThreads) {
    int r = at / (D / 4), d = (at % (D / 4)) * 4;
    Quad v = {{0, 0, 0, 0}};
    if (first + r < t)
      v = loadQuad(head + int64_t(first + r) * rowStride + d);
    storeQuad(to + r * D + d, v);
  }
}

/// acc[i][j] += sum over d of a[d][row i] * b[d][column j], for a thread's
/// 4 rows and 8 columns of two transposed tiles (`a` and `b` [D][64]).
template <int D>
SINTER_KERNEL_INLINE void productOfTransposed(const float *a, const float *b, int rowGroup,
                                              int group, float acc[4][8]) {
#ifdef __CUDACC__
#pragma unroll 8
#endif
  for (int d = 0; d < D; ++d) {
    Quad x = loadQuad(a + d * kTile + rowGroup * 4);
    Quad y0 = loadQuad(b + d * kTile + group * 4);
    Quad y1 = loadQuad(b + d * kTile + 32 + group * 4);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        acc[i][j] += x.x[i] * y0.x[j];
        acc[i][4 + j] += x.x[i] * y1.x[j];
      }
  }
}

/// acc[i][c] += sum over the tile's 64 rows r of p[r][row i] * m[r][column
/// c], for a thread's 4 rows and D / 8 columns (`p` [64][64], `m` [64][D]):
/// a tile of probabilities (or their gradients) times a tile of rows.
template <int D>
SINTER_KERNEL_INLINE void productWithRows(const float *p, const float *m, int rowGroup,
                                          int group, float acc[4][D / 8]) {
#ifdef __CUDACC__
#pragma unroll 4
#endif
  for (int r = 0; r < kTile; ++r) {
    Quad x = loadQuad(p + r * kTile + rowGroup * 4);
    for (int g = 0; g < D / 32; ++g) {
      Quad y = loadQuad(m + r * D + g * 32 + group * 4);
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          acc[i][g * 4 + j] += x.x[i] * y.x[j];
    }
  }
}

/// Stores a thread's 4 x 8 values transposed into `to` [64][64]: to[column
/// j][row i], each column's 4 rows as one store.
SINTER_KERNEL_INLINE void storeTransposed(const float v[4][8], int rowGroup, int group,
                                          float *to) {
  for (int j = 0; j < 8; ++j)
    storeQuad(to + tileColumn(group, j) * kTile + rowGroup * 4,
              Quad{{v[0][j], v[1][j], v[2][j], v[3][j]}});
}

/// Writes a thread's 4 rows of D / 8 columns of a head's tile starting at
/// row `first`, times `factor`, rows past `t` left out.
template <int D>
SINTER_KERNEL_INLINE void storeRows(const float acc[4][D / 8], const float factor[4],
                                    float *head, int64_t rowStride, int first, int rowGroup,
                                    int group, int t) {
  for (int i = 0; i < 4; ++i) {
    int row = first + rowGroup * 4 + i;
    if (row >= t)
      continue;
    for (int g = 0; g < D / 32; ++g)
      storeQuad(head + int64_t(row) * rowStride + g * 32 + group * 4,
                Quad{{acc[i][g * 4] * factor[i], acc[i][g * 4 + 1] * factor[i],
                      acc[i][g * 4 + 2] * factor[i], acc[i][g * 4 + 3] * factor[i]}});
  }
}

/// A score's probability, from its row's log-sum-exp (base 2), and the
/// gradient of the scaled score, p * (dp - delta); both zero where masked.
SINTER_KERNEL_INLINE void probabilityAndGradient(bool masked, float scaledLog2, float lse2,
                                                 float delta, float &score, float &dp) {
  score = masked ? 0.f : exp2Of(scaledLog2 - lse2);
  dp = score * (dp - delta);
}

/// The number of 64-row tiles of t rows.
SINTER_KERNEL_INLINE int tilesOf(int t) { return (t + kTile - 1) / kTile; }

/// The blocks of the delta kernel, one thread a row of `rows`.
SINTER_KERNEL_INLINE int64_t deltaBlocks(int64_t rows) { return (rows + kThreads - 1) / kThreads; }

/// The head sizes the kernels are built for.
SINTER_KERNEL_INLINE bool headSizeBuilt(int64_t d) { return d == 32 || d == 64; }

/// Shared memory each kernel takes, in floats.
template <int D> constexpr int forwardSharedFloats() { return 3 * D * kTile + kTile * kTile; }
/// (The dk/dv kernel's probabilities tile lies over its q and dO tiles,
/// so that head size 64 fits the 99 KiB a block of sm_86 and sm_89 has.)
template <int D> constexpr int keyValueSharedFloats() { return 6 * D * kTile + 2 * kTile; }
template <int D> constexpr int querySharedFloats() { return 5 * D * kTile + kTile * kTile; }

/// Forward: block (x, y) takes query tile tiles - 1 - y (the causal mask's
/// longest rows first) of pair x. Writes o and each row's natural
/// log-sum-exp of its scaled, masked scores.
template <int D, typename Thread>
SINTER_KERNEL_INLINE void attentionForward(Thread &th, const AttentionArgs &a, float *shared) {
  const int rowGroup = th.thread / 8, group = th.thread % 8;
  const int bh = th.blockX, tile = th.gridY - 1 - th.blockY, first = tile * kTile;
  const float *q = a.q + headOffset(a.qkv, bh, a.heads);
  const float *k = a.k + headOffset(a.qkv, bh, a.heads);
  const float *v = a.v + headOffset(a.qkv, bh, a.heads);
  float *qT = shared, *kT = qT + D * kTile, *vRows = kT + D * kTile, *pT = vRows + D * kTile;

  loadTransposed<D>(th, q, a.qkv.row, first, a.t, qT);
  float maximum[4], sum[4], acc[4][D / 8];
  for (int i = 0; i < 4; ++i) {
    maximum[i] = -INFINITY;
    sum[i] = 0;
    for (int c = 0; c < D / 8; ++c)
      acc[i][c] = 0;
  }
  const float scaleLog2 = a.scale * kLog2e;
  const int keyEnd = a.causal && first + kTile < a.t ? first + kTile : a.t;
  for (int keys = 0; keys < keyEnd; keys += kTile) {
    th.sync(); // the last tile's readers are done
    loadTransposed<D>(th, k, a.qkv.row, keys, a.t, kT);
    loadRows<D>(th, v, a.qkv.row, keys, a.t, vRows);
    th.sync();
    float s[4][8] = {};
    productOfTransposed<D>(qT, kT, rowGroup, group, s);
    for (int i = 0; i < 4; ++i) {
      const int row = first + rowGroup * 4 + i;
      float tileMax = -INFINITY;
      for (int j = 0; j < 8; ++j) {
        const int key = keys + tileColumn(group, j);
        s[i][j] = key >= a.t || (a.causal && key > row) ? -INFINITY : s[i][j] * scaleLog2;
        tileMax = maxOf(tileMax, s[i][j]);
      }
      tileMax = rowReduce(th, tileMax, [](float x, float y) { return maxOf(x, y); });
      const float next = maxOf(maximum[i], tileMax);
      // A row with every key masked so far keeps adding zeros.
      const float base = next == -INFINITY ? 0.f : next;
      const float rescale = exp2Of(maximum[i] - base);
      float tileSum = 0;
      for (int j = 0; j < 8; ++j) {
        s[i][j] = exp2Of(s[i][j] - base);
        tileSum += s[i][j];
      }
      tileSum = rowReduce(th, tileSum, [](float x, float y) { return x + y; });
      sum[i] = sum[i] * rescale + tileSum;
      for (int c = 0; c < D / 8; ++c)
        acc[i][c] *= rescale;
      maximum[i] = next;
    }
    storeTransposed(s, rowGroup, group, pT);
    th.sync();
    productWithRows<D>(pT, vRows, rowGroup, group, acc);
  }

  float inverse[4];
  for (int i = 0; i < 4; ++i) {
    inverse[i] = 1.f / sum[i];
    const int row = first + rowGroup * 4 + i;
    if (group == 0 && row < a.t)
      a.lse[int64_t(bh) * a.t + row] = (maximum[i] + log2Of(sum[i])) * kLn2;
  }
  storeRows<D>(acc, inverse, a.o + headOffset(a.out, bh, a.heads), a.out.row, first, rowGroup,
               group, a.t);
}

/// delta[row] = sum over d of dO[row][d] * o[row][d]: one thread a row.
template <int D, typename Thread>
SINTER_KERNEL_INLINE void attentionDelta(Thread &th, const AttentionArgs &a, int64_t rows) {
  const int64_t at = int64_t(th.blockX) * kThreads + th.thread;
  if (at >= rows)
    return;
  const int bh = int(at / a.t), row = int(at % a.t);
  const int64_t offset = headOffset(a.out, bh, a.heads) + int64_t(row) * a.out.row;
  float total = 0;
  for (int d = 0; d < D; d += 4) {
    Quad x = loadQuad(a.o + offset + d), g = loadQuad(a.gradO + offset + d);
    for (int i = 0; i < 4; ++i)
      total += x.x[i] * g.x[i];
  }
  a.delta[at] = total;
}

/// Backward, keys: block (x, y) owns key tile y of pair x and walks the
/// query tiles that see it, for dk and dv.
template <int D, typename Thread>
SINTER_KERNEL_INLINE void attentionBackwardKeys(Thread &th, const AttentionArgs &a,
                                                float *shared) {
  const int rowGroup = th.thread / 8, group = th.thread % 8;
  const int bh = th.blockX, tile = th.blockY, first = tile * kTile;
  const int64_t at = headOffset(a.qkv, bh, a.heads), outAt = headOffset(a.out, bh, a.heads);
  float *kT = shared, *vT = kT + D * kTile, *qT = vT + D * kTile, *gT = qT + D * kTile,
        *qRows = gT + D * kTile, *gRows = qRows + D * kTile, *lse2 = gRows + D * kTile,
        *delta = lse2 + kTile;
  // Once the scores are in registers, the transposed q and dO tiles (2 x D x
  // 64 floats, at least 64 x 64) hold the probabilities and their gradients.
  float *tileT = qT;
  static_assert(2 * D >= kTile, "the probabilities' tile fits over q's and dO's");

  loadTransposed<D>(th, a.k + at, a.qkv.row, first, a.t, kT);
  loadTransposed<D>(th, a.v + at, a.qkv.row, first, a.t, vT);
  float gradK[4][D / 8] = {}, gradV[4][D / 8] = {};
  const float scaleLog2 = a.scale * kLog2e;
  const int queryStart = a.causal ? first : 0;
  for (int queries = queryStart; queries < a.t; queries += kTile) {
    th.sync();
    loadTransposed<D>(th, a.q + at, a.qkv.row, queries, a.t, qT);
    loadTransposed<D>(th, a.gradO + outAt, a.out.row, queries, a.t, gT);
    loadRows<D>(th, a.q + at, a.qkv.row, queries, a.t, qRows);
    loadRows<D>(th, a.gradO + outAt, a.out.row, queries, a.t, gRows);
    for (int r = th.thread; r < kTile; r += kThreads) {
      const bool inside = queries + r < a.t;
      const int64_t stat = int64_t(bh) * a.t + queries + r;
      // A missing query's statistics give it probability 0.
      lse2[r] = inside ? a.lse[stat] * kLog2e : INFINITY;
      delta[r] = inside ? a.delta[stat] : 0.f;
    }
    th.sync();
    // Transposed scores: rows are keys, columns queries.
    float s[4][8] = {}, dp[4][8] = {};
    productOfTransposed<D>(kT, qT, rowGroup, group, s);
    productOfTransposed<D>(vT, gT, rowGroup, group, dp);
    th.sync(); // qT and gT are read: tileT may overwrite them
    for (int i = 0; i < 4; ++i) {
      const int key = first + rowGroup * 4 + i;
      for (int j = 0; j < 8; ++j) {
        const int column = tileColumn(group, j), query = queries + column;
        probabilityAndGradient(key >= a.t || (a.causal && key > query), s[i][j] * scaleLog2,
                               lse2[column], delta[column], s[i][j], dp[i][j]);
      }
    }
    storeTransposed(s, rowGroup, group, tileT);
    th.sync();
    productWithRows<D>(tileT, gRows, rowGroup, group, gradV);
    th.sync();
    storeTransposed(dp, rowGroup, group, tileT);
    th.sync();
    productWithRows<D>(tileT, qRows, rowGroup, group, gradK);
  }
  const float one[4] = {1, 1, 1, 1}, scale[4] = {a.scale, a.scale, a.scale, a.scale};
  storeRows<D>(gradK, scale, a.gradK + at, a.qkv.row, first, rowGroup, group, a.t);
  storeRows<D>(gradV, one, a.gradV + at, a.qkv.row, first, rowGroup, group, a.t);
}

/// Backward, queries: block (x, y) owns query tile tiles - 1 - y of pair x
/// and walks the key tiles it sees, for dq.
template <int D, typename Thread>
SINTER_KERNEL_INLINE void attentionBackwardQueries(Thread &th, const AttentionArgs &a,
                                                   float *shared) {
  const int rowGroup = th.thread / 8, group = th.thread % 8;
  const int bh = th.blockX, tile = th.gridY - 1 - th.blockY, first = tile * kTile;
  const int64_t at = headOffset(a.qkv, bh, a.heads), outAt = headOffset(a.out, bh, a.heads);
  float *qT = shared, *gT = qT + D * kTile, *kT = gT + D * kTile, *vT = kT + D * kTile,
        *kRows = vT + D * kTile, *tileT = kRows + D * kTile;

  loadTransposed<D>(th, a.q + at, a.qkv.row, first, a.t, qT);
  loadTransposed<D>(th, a.gradO + outAt, a.out.row, first, a.t, gT);
  float rowLse2[4], rowDelta[4];
  for (int i = 0; i < 4; ++i) {
    const int row = first + rowGroup * 4 + i;
    const bool inside = row < a.t;
    rowLse2[i] = inside ? a.lse[int64_t(bh) * a.t + row] * kLog2e : INFINITY;
    rowDelta[i] = inside ? a.delta[int64_t(bh) * a.t + row] : 0.f;
  }
  float gradQ[4][D / 8] = {};
  const float scaleLog2 = a.scale * kLog2e;
  const int keyEnd = a.causal && first + kTile < a.t ? first + kTile : a.t;
  for (int keys = 0; keys < keyEnd; keys += kTile) {
    th.sync();
    loadTransposed<D>(th, a.k + at, a.qkv.row, keys, a.t, kT);
    loadTransposed<D>(th, a.v + at, a.qkv.row, keys, a.t, vT);
    loadRows<D>(th, a.k + at, a.qkv.row, keys, a.t, kRows);
    th.sync();
    float s[4][8] = {}, dp[4][8] = {};
    productOfTransposed<D>(qT, kT, rowGroup, group, s);
    productOfTransposed<D>(gT, vT, rowGroup, group, dp);
    for (int i = 0; i < 4; ++i) {
      const int row = first + rowGroup * 4 + i;
      for (int j = 0; j < 8; ++j) {
        const int key = keys + tileColumn(group, j);
        probabilityAndGradient(key >= a.t || (a.causal && key > row), s[i][j] * scaleLog2,
                               rowLse2[i], rowDelta[i], s[i][j], dp[i][j]);
      }
    }
    storeTransposed(dp, rowGroup, group, tileT);
    th.sync();
    productWithRows<D>(tileT, kRows, rowGroup, group, gradQ);
  }
  const float scale[4] = {a.scale, a.scale, a.scale, a.scale};
  storeRows<D>(gradQ, scale, a.gradQ + at, a.qkv.row, first, rowGroup, group, a.t);
}

} // namespace sinter::rt::cuda::kernels

#endif // SINTER_RT_CUDA_KERNELS_ATTENTIONF32KERNELS_H
