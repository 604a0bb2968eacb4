//===- AttentionOnHost.cpp - abi.h's fused attention, on host memory -----===//

#include "cudaonhost/AttentionOnHost.h"

#include "cpu/MatmulBF16.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace sinter::rt::cudaonhost {

template <> struct Element<float> {
  static float load(const float *p) { return *p; }
  static void store(float *p, float v) { *p = v; }
};

template <> struct Element<uint16_t> {
  static float load(const uint16_t *p) {
    uint32_t bits = uint32_t(*p) << 16;
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  static void store(uint16_t *p, float v) { *p = roundToBF16(v); }
};

namespace {

/// One (batch, head) pair's operand: its rows as floats, read and written
/// through the operand's strides.
template <typename T> struct Operand {
  T *base;
  AttentionStrides strides;
  int64_t width;
  T *at(int64_t b, int64_t h, int64_t t) const {
    return base + b * strides.batch + h * strides.head + t * strides.row;
  }
  std::vector<float> rows(int64_t b, int64_t h, int64_t count) const {
    std::vector<float> out(size_t(count * width));
    for (int64_t t = 0; t < count; ++t)
      for (int64_t i = 0; i < width; ++i)
        out[size_t(t * width + i)] = Element<std::remove_const_t<T>>::load(at(b, h, t) + i);
    return out;
  }
  void write(int64_t b, int64_t h, int64_t count, const std::vector<float> &values) const {
    for (int64_t t = 0; t < count; ++t)
      for (int64_t i = 0; i < width; ++i)
        Element<std::remove_const_t<T>>::store(at(b, h, t) + i,
                                               values[size_t(t * width + i)]);
  }
};

float dot(const float *x, const float *y, int64_t n) {
  float total = 0;
  for (int64_t i = 0; i < n; ++i)
    total += x[i] * y[i];
  return total;
}

/// A query's scaled scores against every key, -inf where masked.
void scores(const AttentionShape &s, const std::vector<float> &q,
            const std::vector<float> &k, int64_t query, float scale, float *out) {
  for (int64_t key = 0; key < s.tk; ++key)
    out[key] = s.causal && key > query
                   ? -std::numeric_limits<float>::infinity()
                   : scale * dot(&q[size_t(query * s.d)], &k[size_t(key * s.d)], s.d);
}

/// The natural log-sum-exp of `n` scores.
float logSumExp(const float *x, int64_t n) {
  float top = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i)
    top = std::fmax(top, x[i]);
  float sum = 0;
  for (int64_t i = 0; i < n; ++i)
    sum += std::exp(x[i] - top);
  return top + std::log(sum);
}

} // namespace

template <typename T>
void attentionForward(const AttentionShape &s, const T *q, const T *k, const T *v, T *o,
                      float *stats) {
  const float scale = 1.0f / std::sqrt(float(s.d));
  Operand<const T> qs{q, s.q, s.d}, ks{k, s.k, s.d}, vs{v, s.v, s.dv};
  Operand<T> os{o, s.o, s.dv};
  std::vector<float> row(size_t(s.tk)), out(size_t(s.tq * s.dv));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      std::vector<float> qr = qs.rows(b, h, s.tq), kr = ks.rows(b, h, s.tk),
                         vr = vs.rows(b, h, s.tk);
      for (int64_t i = 0; i < s.tq; ++i) {
        scores(s, qr, kr, i, scale, row.data());
        const float lse = logSumExp(row.data(), s.tk);
        if (stats)
          stats[(b * s.heads + h) * s.tq + i] = lse;
        float *oi = &out[size_t(i * s.dv)];
        std::fill(oi, oi + s.dv, 0.0f);
        for (int64_t j = 0; j < s.tk; ++j) {
          const float p = std::exp(row[size_t(j)] - lse);
          for (int64_t c = 0; c < s.dv; ++c)
            oi[c] += p * vr[size_t(j * s.dv + c)];
        }
      }
      os.write(b, h, s.tq, out);
    }
}

template <typename T>
void attentionBackward(const AttentionShape &s, const T *q, const T *k, const T *v,
                       const T *o, const float *stats, const T *gradO, T *gradQ,
                       T *gradK, T *gradV) {
  const float scale = 1.0f / std::sqrt(float(s.d));
  Operand<const T> qs{q, s.q, s.d}, ks{k, s.k, s.d}, vs{v, s.v, s.dv},
      gos{gradO, s.o, s.dv}, os{o, s.o, s.dv};
  Operand<T> gqs{gradQ, s.q, s.d}, gks{gradK, s.k, s.d}, gvs{gradV, s.v, s.dv};
  std::vector<float> row(size_t(s.tk)), dp(size_t(s.tk));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h) {
      std::vector<float> qr = qs.rows(b, h, s.tq), kr = ks.rows(b, h, s.tk),
                         vr = vs.rows(b, h, s.tk), gor = gos.rows(b, h, s.tq);
      std::vector<float> or_ = o ? os.rows(b, h, s.tq) : std::vector<float>();
      std::vector<float> gq(size_t(s.tq * s.d), 0.0f), gk(size_t(s.tk * s.d), 0.0f),
          gv(size_t(s.tk * s.dv), 0.0f);
      for (int64_t i = 0; i < s.tq; ++i) {
        scores(s, qr, kr, i, scale, row.data());
        const float lse =
            stats ? stats[(b * s.heads + h) * s.tq + i] : logSumExp(row.data(), s.tk);
        const float *gi = &gor[size_t(i * s.dv)];
        float delta = 0;
        for (int64_t j = 0; j < s.tk; ++j) {
          row[size_t(j)] = std::exp(row[size_t(j)] - lse);
          dp[size_t(j)] = dot(gi, &vr[size_t(j * s.dv)], s.dv);
          delta += row[size_t(j)] * dp[size_t(j)];
        }
        if (o)
          delta = dot(gi, &or_[size_t(i * s.dv)], s.dv);
        for (int64_t j = 0; j < s.tk; ++j) {
          const float p = row[size_t(j)], ds = p * (dp[size_t(j)] - delta) * scale;
          for (int64_t c = 0; c < s.dv; ++c)
            gv[size_t(j * s.dv + c)] += p * gi[c];
          for (int64_t c = 0; c < s.d; ++c) {
            gq[size_t(i * s.d + c)] += ds * kr[size_t(j * s.d + c)];
            gk[size_t(j * s.d + c)] += ds * qr[size_t(i * s.d + c)];
          }
        }
      }
      gqs.write(b, h, s.tq, gq);
      gks.write(b, h, s.tk, gk);
      gvs.write(b, h, s.tk, gv);
    }
}

template void attentionForward<float>(const AttentionShape &, const float *, const float *,
                                      const float *, float *, float *);
template void attentionForward<uint16_t>(const AttentionShape &, const uint16_t *,
                                         const uint16_t *, const uint16_t *, uint16_t *,
                                         float *);
template void attentionBackward<float>(const AttentionShape &, const float *, const float *,
                                       const float *, const float *, const float *,
                                       const float *, float *, float *, float *);
template void attentionBackward<uint16_t>(const AttentionShape &, const uint16_t *,
                                          const uint16_t *, const uint16_t *,
                                          const uint16_t *, const float *,
                                          const uint16_t *, uint16_t *, uint16_t *,
                                          uint16_t *);

} // namespace sinter::rt::cudaonhost
