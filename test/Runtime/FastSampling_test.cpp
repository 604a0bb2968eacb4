//===- FastSampling_test.cpp - Synthetic data's samplers -----------------===//

#include "core/FastSampling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

using namespace sinter::rt;

namespace {

const PhiloxStream kStream{7, fnv1a64("synthetic.x")};

/// Box-Muller in float64 with libm from the same Philox words: what each
/// float value approximates.
double referenceNormal(uint64_t i) {
  PhiloxCounter c = philox4x32x10({(uint32_t)(i / 4), (uint32_t)(i / 4 >> 32),
                                   (uint32_t)kStream.id, (uint32_t)(kStream.id >> 32)},
                                  {(uint32_t)kStream.seed, (uint32_t)(kStream.seed >> 32)});
  unsigned pair = (i % 4) / 2;
  double u = ((c[2 * pair] >> 8) + 1) / 16777216.0;
  double t = (c[2 * pair + 1] >> 8) / 16777216.0;
  double r = std::sqrt(-2 * std::log(u)), angle = 2 * M_PI * t;
  return i % 2 ? r * std::sin(angle) : r * std::cos(angle);
}

} // namespace

TEST(FastSampling, NormalsAreBoxMullerWithinFloatRounding) {
  const uint64_t n = 1 << 18;
  std::vector<float> z(n);
  fastStandardNormals(kStream, 0, n, z.data());
  double worst = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double want = referenceNormal(i);
    worst = std::max(worst, std::abs(z[i] - want) / std::max(1.0, std::abs(want)));
  }
  // A wrong quadrant or coefficient is off by far more than float's 6e-8.
  EXPECT_LT(worst, 1e-6);
}

TEST(FastSampling, NormalsHaveTheMomentsOfOne) {
  const uint64_t n = 1 << 20;
  std::vector<float> z(n);
  fastStandardNormals(kStream, 12345, n, z.data());
  double sum = 0, squares = 0, fourth = 0;
  uint64_t beyond3 = 0;
  for (float v : z) {
    sum += v;
    squares += double(v) * v;
    fourth += double(v) * v * v * v;
    beyond3 += std::abs(v) > 3;
  }
  double mean = sum / n, var = squares / n - mean * mean;
  EXPECT_NEAR(mean, 0, 5e-3);
  EXPECT_NEAR(var, 1, 5e-3);
  EXPECT_NEAR(fourth / n, 3, 0.05);
  // P(|z| > 3) = 0.0027.
  EXPECT_NEAR(double(beyond3) / n, 0.0027, 0.0004);
}

TEST(FastSampling, AValueDependsOnlyOnItsIndex) {
  std::vector<float> whole(3000), part(2003);
  fastStandardNormals(kStream, 0, whole.size(), whole.data());
  fastStandardNormals(kStream, 997, part.size(), part.data());
  for (size_t i = 0; i < part.size(); ++i)
    ASSERT_EQ(part[i], whole[997 + i]) << i;
  std::vector<int64_t> ints(3000), intPart(5);
  fastUniformIntegers(kStream, 0, ints.size(), 1000, ints.data());
  fastUniformIntegers(kStream, 2995, intPart.size(), 1000, intPart.data());
  for (size_t i = 0; i < intPart.size(); ++i)
    ASSERT_EQ(intPart[i], ints[2995 + i]) << i;
  // Another stream, other values.
  std::vector<float> other(16);
  fastStandardNormals(PhiloxStream{8, kStream.id}, 0, other.size(), other.data());
  EXPECT_NE(other[0], whole[0]);
}

TEST(FastSampling, IntegersAreUniformBelowTheBound) {
  const uint64_t n = 1 << 20;
  std::vector<int64_t> v(n);
  fastUniformIntegers(kStream, 3, n, 10, v.data());
  std::vector<uint64_t> counts(10);
  for (int64_t x : v) {
    ASSERT_GE(x, 0);
    ASSERT_LT(x, 10);
    ++counts[x];
  }
  for (uint64_t c : counts)
    EXPECT_NEAR(double(c) / n, 0.1, 0.003);
  fastUniformIntegers(kStream, 0, 100, 1, v.data());
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(v[i], 0);
}

// The same bits on every IEEE-754 machine: values written down once. A
// fused multiply-add (contraction) or a libm call would change them.
TEST(FastSampling, NormalsHaveTheirPinnedBits) {
  const uint32_t want[6] = {0x3fe0b2a8u, 0xbfc91b27u, 0x3e8e01b6u,
                            0x40434b81u, 0xbc22671bu, 0xbf9ea3b6u};
  float z[6];
  fastStandardNormals(kStream, 1000000, 6, z);
  for (int i = 0; i < 6; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &z[i], sizeof bits);
    EXPECT_EQ(bits, want[i]) << i << ": " << z[i];
  }
}

TEST(FastSampling, IntegersStayBelowTheLargestBound) {
  std::vector<int64_t> v(1 << 16);
  fastUniformIntegers(kStream, 0, v.size(), 1u << 31, v.data());
  int64_t high = 0;
  for (int64_t x : v) {
    ASSERT_GE(x, 0);
    ASSERT_LT(x, int64_t(1) << 31);
    high = std::max(high, x);
  }
  EXPECT_GT(high, int64_t(1) << 30); // the upper half is reached
}
