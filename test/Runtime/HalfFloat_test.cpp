//===- HalfFloat_test.cpp - float16 / bfloat16 conversions ----------------===//

#include "core/HalfFloat.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace sinter::rt;

TEST(HalfFloat, Float16Values) {
  EXPECT_EQ(doubleToHalf(0.0), 0x0000);
  EXPECT_EQ(doubleToHalf(-0.0), 0x8000);
  EXPECT_EQ(doubleToHalf(1.0), 0x3c00);
  EXPECT_EQ(doubleToHalf(-2.0), 0xc000);
  EXPECT_EQ(doubleToHalf(65504.0), 0x7bff);
  EXPECT_EQ(doubleToHalf(65520.0), 0x7c00) << "rounds up to infinity";
  EXPECT_EQ(doubleToHalf(65519.99), 0x7bff);
  EXPECT_EQ(doubleToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(doubleToHalf(0x1p-24), 0x0001) << "smallest subnormal";
  EXPECT_EQ(doubleToHalf(0x1p-25), 0x0000) << "tie rounds to even (zero)";
  EXPECT_EQ(doubleToHalf(0x1.8p-24), 0x0002) << "tie rounds to even (two)";
  EXPECT_EQ(doubleToHalf(0x1.ffcp-15), 0x0400) << "subnormal carries into the smallest normal";
  EXPECT_EQ(doubleToHalf(1.0 + 0x1p-11), 0x3c00) << "tie to even";
  EXPECT_EQ(doubleToHalf(1.0 + 0x1p-11 + 0x1p-40), 0x3c01) << "just above the tie";
  EXPECT_TRUE(std::isnan(halfToDouble(doubleToHalf(NAN))));
}

TEST(HalfFloat, BFloat16Values) {
  EXPECT_EQ(doubleToBFloat16(1.0), 0x3f80);
  EXPECT_EQ(doubleToBFloat16(-1.0), 0xbf80);
  EXPECT_EQ(doubleToBFloat16(1.0 + 0x1p-8), 0x3f80) << "tie to even";
  EXPECT_EQ(doubleToBFloat16(1.0 + 0x1p-8 + 0x1p-40), 0x3f81)
      << "a detour through float would round this to the tie, then to even";
  EXPECT_EQ(doubleToBFloat16(3.0e38), 0x7f62);
  EXPECT_EQ(doubleToBFloat16(1e39), 0x7f80);
  EXPECT_EQ(doubleToBFloat16(0x1p-133), 0x0001) << "smallest subnormal";
}

TEST(HalfFloat, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    double h = halfToDouble((uint16_t)b);
    if (!std::isnan(h)) {
      EXPECT_EQ(doubleToHalf(h), b);
    }
    double f = bfloat16ToDouble((uint16_t)b);
    if (!std::isnan(f)) {
      EXPECT_EQ(doubleToBFloat16(f), b);
    }
  }
}
