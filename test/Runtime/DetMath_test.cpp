//===- DetMath_test.cpp - Reproducible log/exp/cos/erfc/quantile ----------===//
//
// Bit-exactness against numpy is checked by init_reference.py; here the
// functions are checked for accuracy against libm.

#include "core/DetMath.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace sinter::rt;

TEST(DetMath, LogMatchesLibm) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int i = 0; i < 100000; ++i) {
    double x = unit(rng) * std::pow(10.0, -300 * unit(rng)) + 1e-300;
    double want = std::log(x);
    EXPECT_NEAR(detmath::log(x), want, 4e-16 * std::fabs(want) + 1e-300) << x;
  }
  EXPECT_EQ(detmath::log(1.0), 0.0);
  EXPECT_NEAR(detmath::log(0x1p-53), std::log(0x1p-53), 1e-14);
}

TEST(DetMath, ExpMatchesLibm) {
  for (double x = -700; x <= 0; x += 0.0137)
    EXPECT_NEAR(detmath::exp(x), std::exp(x), 4e-16 * std::exp(x)) << x;
  EXPECT_EQ(detmath::exp(-800), 0.0);
  EXPECT_EQ(detmath::exp(0), 1.0);
}

TEST(DetMath, Cos2PiMatchesLibm) {
  for (int i = 0; i < 100000; ++i) {
    double u = i / 100000.0;
    EXPECT_NEAR(detmath::cos2pi(u), std::cos(2 * M_PI * u), 1e-15) << u;
  }
  EXPECT_EQ(detmath::cos2pi(0), 1.0);
  EXPECT_EQ(detmath::cos2pi(0.5), -1.0);
}

TEST(DetMath, ErfcAndCdf) {
  for (double y = -6; y <= 26; y += 0.01) { // 0 past 26.4 (exp's cut-off)
    double want = std::erfc(y);
    EXPECT_NEAR(detmath::erfc(y), want, 1e-12 * want) << y;
  }
  EXPECT_EQ(detmath::normalCdf(-INFINITY), 0.0);
  EXPECT_EQ(detmath::normalCdf(INFINITY), 1.0);
  EXPECT_NEAR(detmath::normalCdf(0), 0.5, 1e-16);
  EXPECT_NEAR(detmath::normalCdf(-2), 0.022750131948179195, 1e-16);
}

TEST(DetMath, QuantileInvertsCdf) {
  // Below 0, Phi(x) keeps full relative precision; above, 1 - Phi(x) loses
  // it as Phi(x) nears 1, as it must in double.
  for (double x = -8; x <= 0; x += 0.01)
    EXPECT_NEAR(detmath::normalQuantile(detmath::normalCdf(x)), x, 1e-9) << x;
  for (double x = 0; x <= 5; x += 0.01)
    EXPECT_NEAR(detmath::normalQuantile(detmath::normalCdf(x)), x, 1e-7) << x;
  EXPECT_EQ(detmath::normalQuantile(0), -INFINITY);
  EXPECT_EQ(detmath::normalQuantile(1), INFINITY);
  EXPECT_EQ(detmath::normalQuantile(0.5), 0.0);
}
