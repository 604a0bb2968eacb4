//===- FastSampling.cpp - Cheap random batches for synthetic data ---------===//

#include "core/FastSampling.h"

#include "core/FloatBits.h"

#include <algorithm>
#include <cmath>

namespace sinter::rt {
namespace {

/// Philox blocks handled together: their words are laid out one array per
/// word so that the arithmetic after them runs over contiguous lanes.
constexpr uint64_t kBlocks = 256;

struct Words {
  uint32_t w[4][kBlocks];
};

void philoxBlocks(const PhiloxStream &stream, uint64_t firstBlock, uint64_t blocks,
                  Words &out) {
  PhiloxKey key{(uint32_t)stream.seed, (uint32_t)(stream.seed >> 32)};
  for (uint64_t j = 0; j < blocks; ++j) {
    uint64_t i = firstBlock + j;
    PhiloxCounter c = philox4x32x10(
        {(uint32_t)i, (uint32_t)(i >> 32), (uint32_t)stream.id, (uint32_t)(stream.id >> 32)},
        key);
    for (int k = 0; k < 4; ++k)
      out.w[k][j] = c[k];
  }
}

/// log((k + 1) / 2^24) for k < 2^24: k + 1 = m * 2^e exactly (m in
/// [sqrt(1/2), sqrt(2))), log m from atanh's series in f = (m-1)/(m+1)
/// (|f| < 0.172, so four terms leave 2e-9), e * ln 2 in two parts. Integer
/// operations on the bits, not branches, so that the loop vectorizes.
inline float logOfUniform(uint32_t k) {
  constexpr float kLn2Hi = 0.693145751953125f, kLn2Lo = 1.42860676533018e-06f;
  constexpr uint32_t kSqrt2Mantissa = 0x3504f3u; // of 1.41421354f
  uint32_t bits = floatBits((float)(k + 1));
  uint32_t mantissa = bits & 0x7fffffu;
  uint32_t big = mantissa > kSqrt2Mantissa ? 1u : 0u;
  float m = floatFromBits(mantissa | (0x3f800000u - (big << 23)));
  float x = (float)((int32_t)(bits >> 23) - 127 + (int32_t)big - 24);
  float f = (m - 1.0f) / (m + 1.0f);
  float s = f * f;
  float series = s * (1.0f / 3 + s * (1.0f / 5 + s * (1.0f / 7 + s * (1.0f / 9))));
  float logM = 2.0f * f + 2.0f * f * series;
  return x * kLn2Hi + (logM + x * kLn2Lo);
}

inline float flipSign(float v, uint32_t flip) {
  return floatFromBits(floatBits(v) ^ (flip << 31));
}

inline float pick(uint32_t second, float first, float other) {
  uint32_t mask = 0u - second;
  return floatFromBits((floatBits(first) & ~mask) | (floatBits(other) & mask));
}

/// The Box-Muller pair of two 24-bit uniforms: r cos(2 pi t), r sin(2 pi t)
/// with r = sqrt(-2 log u). The angle's top two bits pick the quadrant; the
/// rest give x in [0, pi/2), where Taylor polynomials of degree 13 and 14
/// leave under 1e-9.
inline void boxMuller(uint32_t radiusBits, uint32_t angleBits, float &c, float &s) {
  constexpr float kHalfPi = 1.57079632679489662f;
  float r = std::sqrt(-2.0f * logOfUniform(radiusBits));
  uint32_t q = angleBits >> 22;
  float x = (float)(int32_t)(angleBits & 0x3fffffu) * (kHalfPi / 4194304.0f);
  float x2 = x * x;
  float sinX =
      x * (1.0f + x2 * (-1.0f / 6 + x2 * (1.0f / 120 + x2 * (-1.0f / 5040 +
           x2 * (1.0f / 362880 + x2 * (-1.0f / 39916800 + x2 * (1.0f / 6227020800.0f)))))));
  float cosX =
      1.0f + x2 * (-0.5f + x2 * (1.0f / 24 + x2 * (-1.0f / 720 + x2 * (1.0f / 40320 +
             x2 * (-1.0f / 3628800 + x2 * (1.0f / 479001600 + x2 * (-1.0f / 87178291200.0f)))))));
  // cos(q pi/2 + x) and sin(q pi/2 + x): odd quadrants swap sin and cos,
  // the cosine is negative in quadrants 1 and 2, the sine in 2 and 3.
  c = flipSign(r * pick(q & 1, cosX, sinX), ((q + 1) >> 1) & 1);
  s = flipSign(r * pick(q & 1, sinX, cosX), q >> 1);
}

/// Calls fill(firstBlock, blocks, values) for the blocks that hold elements
/// [first, first + count), four values a block, and copies the wanted ones.
template <typename T, typename Fill>
void byBlocks(uint64_t first, uint64_t count, T *out, Fill fill) {
  T values[4 * kBlocks];
  uint64_t end = first + count;
  for (uint64_t block = first / 4; block * 4 < end; block += kBlocks) {
    uint64_t blocks = std::min(kBlocks, (end + 3) / 4 - block);
    fill(block, blocks, values);
    uint64_t from = std::max(first, block * 4), to = std::min(end, (block + blocks) * 4);
    std::copy(values + (from - block * 4), values + (to - block * 4), out + (from - first));
  }
}

} // namespace

void fastStandardNormals(const PhiloxStream &stream, uint64_t first, uint64_t count,
                         float *out) {
  Words words;
  float pairs[4][kBlocks];
  byBlocks(first, count, out, [&](uint64_t block, uint64_t blocks, float *values) {
    philoxBlocks(stream, block, blocks, words);
    for (uint64_t j = 0; j < blocks; ++j) {
      boxMuller(words.w[0][j] >> 8, words.w[1][j] >> 8, pairs[0][j], pairs[1][j]);
      boxMuller(words.w[2][j] >> 8, words.w[3][j] >> 8, pairs[2][j], pairs[3][j]);
    }
    for (uint64_t j = 0; j < blocks; ++j)
      for (int k = 0; k < 4; ++k)
        values[4 * j + k] = pairs[k][j];
  });
}

void fastUniformIntegers(const PhiloxStream &stream, uint64_t first, uint64_t count,
                         uint32_t bound, int64_t *out) {
  Words words;
  byBlocks(first, count, out, [&](uint64_t block, uint64_t blocks, int64_t *values) {
    philoxBlocks(stream, block, blocks, words);
    for (uint64_t j = 0; j < blocks; ++j)
      for (int k = 0; k < 4; ++k)
        values[4 * j + k] = (int64_t)(((uint64_t)words.w[k][j] * bound) >> 32);
  });
}

} // namespace sinter::rt
