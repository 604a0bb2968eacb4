//===- DnnlPool_test.cpp - The CPU library's pooling against direct loops -===//
//
// Max and average pooling and their gradients through oneDNN, NCHW and
// NHWC, against loops written from the definitions the graph ops give: the
// maximum never taken from the padding and its gradient to the first
// maximum of the window in row-major order; the average over the whole
// window, padding counted as zeros. Windows that overlap, padding, and a
// last window that stops short of the edge are among the shapes; inputs
// hold ties, as a ReLU before the pooling makes them.
//
//===----------------------------------------------------------------------===//

#include "runtime/contract/abi.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

struct Pool {
  int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
  int64_t oh() const { return (h + 2 * ph - kh) / sh + 1; }
  int64_t ow() const { return (w + 2 * pw - kw) / sw + 1; }
  size_t at(int64_t b, int64_t ch, int64_t y, int64_t x, int64_t hh, int64_t ww) const {
    return size_t(((b * c + ch) * hh + y) * ww + x);
  }
};

/// Values from a few levels, so that windows hold ties.
std::vector<float> leveled(size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> level(-3, 3);
  std::vector<float> v(count);
  for (float &x : v)
    x = std::max(0, level(gen)) * 0.5f;
  return v;
}

/// y, and dx for dy, by the definitions (NCHW).
void reference(const Pool &p, bool max, const std::vector<float> &x,
               const std::vector<float> &dy, std::vector<float> &y,
               std::vector<float> &dx) {
  y.assign(size_t(p.n * p.c * p.oh() * p.ow()), 0.0f);
  dx.assign(x.size(), 0.0f);
  for (int64_t b = 0; b < p.n; ++b)
    for (int64_t ch = 0; ch < p.c; ++ch)
      for (int64_t i = 0; i < p.oh(); ++i)
        for (int64_t j = 0; j < p.ow(); ++j) {
          size_t out = p.at(b, ch, i, j, p.oh(), p.ow());
          float best = -std::numeric_limits<float>::infinity(), sum = 0.0f;
          size_t winner = 0;
          for (int64_t u = 0; u < p.kh; ++u)
            for (int64_t v = 0; v < p.kw; ++v) {
              int64_t yy = i * p.sh + u - p.ph, xx = j * p.sw + v - p.pw;
              if (yy < 0 || yy >= p.h || xx < 0 || xx >= p.w)
                continue;
              float value = x[p.at(b, ch, yy, xx, p.h, p.w)];
              sum += value;
              if (value > best) {
                best = value;
                winner = p.at(b, ch, yy, xx, p.h, p.w);
              }
            }
          float share = 1.0f / float(p.kh * p.kw);
          y[out] = max ? best : sum * share;
          if (max) {
            dx[winner] += dy[out];
            continue;
          }
          for (int64_t u = 0; u < p.kh; ++u)
            for (int64_t v = 0; v < p.kw; ++v) {
              int64_t yy = i * p.sh + u - p.ph, xx = j * p.sw + v - p.pw;
              if (yy >= 0 && yy < p.h && xx >= 0 && xx < p.w)
                dx[p.at(b, ch, yy, xx, p.h, p.w)] += dy[out] * share;
            }
        }
}

std::vector<float> toChannelsLast(const std::vector<float> &a, int64_t n, int64_t c,
                                  int64_t hw) {
  std::vector<float> out(a.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < hw; ++s)
        out[size_t((b * hw + s) * c + ch)] = a[size_t((b * c + ch) * hw + s)];
  return out;
}

void expectNear(const std::vector<float> &got, const std::vector<float> &want,
                const char *what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-6f * std::max(1.0f, std::abs(want[i])))
        << what << " at " << i;
}

void checkPool(const Pool &p, bool max, bool last, unsigned seed) {
  std::vector<float> x = leveled(size_t(p.n * p.c * p.h * p.w), seed);
  std::vector<float> dy = leveled(size_t(p.n * p.c * p.oh() * p.ow()), seed + 1);
  for (float &g : dy)
    g -= 0.6f; // gradients of both signs
  std::vector<float> y, dx;
  reference(p, max, x, dy, y, dx);
  int64_t in = p.h * p.w, out = p.oh() * p.ow();
  if (last) {
    x = toChannelsLast(x, p.n, p.c, in);
    dy = toChannelsLast(dy, p.n, p.c, out);
    y = toChannelsLast(y, p.n, p.c, out);
    dx = toChannelsLast(dx, p.n, p.c, in);
  }
  std::vector<float> gotY(y.size()), gotDx(dx.size(), 7.0f);
  sinter_cpu_pool2d_f32(x.data(), gotY.data(), p.n, p.c, p.h, p.w, p.oh(), p.ow(), p.kh,
                        p.kw, p.sh, p.sw, p.ph, p.pw, max, last);
  sinter_cpu_pool2d_backward_f32(x.data(), dy.data(), gotDx.data(), p.n, p.c, p.h, p.w,
                                 p.oh(), p.ow(), p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, max,
                                 last);
  expectNear(gotY, y, "pooling");
  expectNear(gotDx, dx, "its gradient");
}

TEST(DnnlPool, MaxAndAverageInBothLayoutsMatchTheDefinitions) {
  const Pool shapes[] = {
      {2, 16, 8, 8, 2, 2, 2, 2, 0, 0},   // the common 2x2, stride 2
      {2, 5, 9, 7, 3, 3, 2, 2, 1, 1},    // overlapping, padded, odd channels
      {1, 8, 5, 5, 2, 2, 2, 2, 0, 0},    // the last window stops short
      {3, 32, 6, 6, 3, 3, 1, 1, 1, 1},   // stride 1
      {2, 16, 8, 8, 2, 2, 3, 3, 0, 0},   // gaps between the windows
      {4, 3, 8, 8, 2, 2, 2, 2, 0, 0},    // fewer channels than a vector
      {2, 16, 6, 6, 3, 3, 3, 3, 1, 1},   // padded: a pixel in no window
  };
  unsigned seed = 1;
  for (const Pool &p : shapes)
    for (bool max : {true, false})
      for (bool last : {false, true}) {
        SCOPED_TRACE("c=" + std::to_string(p.c) + " h=" + std::to_string(p.h) + " k=" +
                     std::to_string(p.kh) + (max ? " max" : " average") +
                     (last ? " channels last" : ""));
        checkPool(p, max, last, seed += 2);
      }
}

// A window whose values are all -inf or NaN has no maximum: its gradient
// is dropped, as the compiler's lowering drops it (NHWC, where the
// gradient is Sinter's own loop).
TEST(DnnlPool, MaxGradientOfAWindowWithoutAMaximumIsDropped) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // One image of 2 x 4 pixels, 2 channels, pooled 2x2 by 2: two windows.
  // Channel 0: left window all -inf, right window NaN beside 1.0 (1.0 wins).
  // Channel 1: left window NaN and -inf only, right window ties at 2.0.
  std::vector<float> x = {-inf, nan, -inf, -inf, nan, 2.0f, 1.0f, 2.0f,  // row 0
                          -inf, -inf, -inf, nan, nan, 2.0f, nan, 2.0f}; // row 1
  std::vector<float> dy = {3.0f, 5.0f, 7.0f, 11.0f}, dx(x.size(), 9.0f);
  sinter_cpu_pool2d_backward_f32(x.data(), dy.data(), dx.data(), 1, 2, 2, 4, 1, 2, 2, 2, 2,
                                 2, 0, 0, 1, 1);
  // Pixel (y, x) channel ch is dx[(y * 4 + x) * 2 + ch].
  std::vector<float> want(x.size(), 0.0f);
  want[(0 * 4 + 3) * 2 + 0] = 7.0f;  // channel 0's 1.0 at (0, 3)
  want[(0 * 4 + 2) * 2 + 1] = 11.0f; // channel 1's first 2.0 at (0, 2)
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(dx[i], want[i]) << i;
}

} // namespace
