//===- Dnnl_test.cpp - The CPU library kernels against direct sums --------===//
//
// The convolutions run in the layouts oneDNN picks (blocked channels where
// the machine has them), reordered from and to the caller's plain arrays
// through scratch shared by every kernel: each result (NCHW and channels
// last, a kernel gradient written or added into an accumulator) is checked
// against a float64 sum, for shapes of several sizes in turn, so that a
// kernel that reads or writes scratch sized for another one shows.
//
//===----------------------------------------------------------------------===//

#include "cpu/DnnlEngine.h"
#include "cpu/MatmulBF16.h"
#include "device/Device.h"
#include "runtime/contract/abi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace {

struct Conv {
  int64_t n, c, h, w, o, kh, kw, sh, sw, dh, dw, ph, pw;
  int64_t oh() const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
  /// Calls f(n, o, i, j, c, y, x) for every product of the convolution,
  /// (y, x) the unpadded input position, skipping those in the padding.
  template <typename F> void each(F f) const {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t oc = 0; oc < o; ++oc)
        for (int64_t i = 0; i < oh(); ++i)
          for (int64_t j = 0; j < ow(); ++j)
            for (int64_t ic = 0; ic < c; ++ic)
              for (int64_t u = 0; u < kh; ++u)
                for (int64_t v = 0; v < kw; ++v) {
                  int64_t y = i * sh + u * dh - ph, x = j * sw + v * dw - pw;
                  if (y >= 0 && y < h && x >= 0 && x < w)
                    f(b, oc, i, j, ic, u, v, y, x);
                }
  }
  size_t xAt(int64_t b, int64_t ic, int64_t y, int64_t x) const {
    return size_t(((b * c + ic) * h + y) * w + x);
  }
  size_t wAt(int64_t oc, int64_t ic, int64_t u, int64_t v) const {
    return size_t(((oc * c + ic) * kh + u) * kw + v);
  }
  size_t yAt(int64_t b, int64_t oc, int64_t i, int64_t j) const {
    return size_t(((b * o + oc) * oh() + i) * ow() + j);
  }
};

std::vector<float> randoms(size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float &x : v)
    x = d(gen);
  return v;
}

/// Every element within a float32 sum's error of the float64 one.
void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 double terms, const char *what) {
  ASSERT_EQ(got.size(), want.size());
  double tolerance = 4 * terms * 6e-8;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tolerance * std::max(1.0, std::abs(want[i])))
        << what << " at " << i;
}

/// x with its zero padding written out: the form in which a named
/// convolution reaches the forward call (padding 0).
std::vector<float> padded(const Conv &s, const std::vector<float> &x) {
  Conv p = s;
  p.h = s.h + 2 * s.ph;
  p.w = s.w + 2 * s.pw;
  std::vector<float> out(size_t(s.n * s.c * p.h * p.w), 0.0f);
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t ic = 0; ic < s.c; ++ic)
      for (int64_t y = 0; y < s.h; ++y)
        for (int64_t x0 = 0; x0 < s.w; ++x0)
          out[p.xAt(b, ic, y + s.ph, x0 + s.pw)] = x[s.xAt(b, ic, y, x0)];
  return out;
}

/// An [n, c, h, w] array stored [n, h, w, c] (channels last), and back.
std::vector<float> toChannelsLast(const std::vector<float> &a, int64_t n, int64_t c,
                                  int64_t h, int64_t w) {
  std::vector<float> out(a.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t y = 0; y < h * w; ++y)
        out[size_t((b * h * w + y) * c + ic)] = a[size_t((b * c + ic) * h * w + y)];
  return out;
}
std::vector<float> fromChannelsLast(const std::vector<float> &a, int64_t n, int64_t c,
                                    int64_t h, int64_t w) {
  std::vector<float> out(a.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t y = 0; y < h * w; ++y)
        out[size_t((b * c + ic) * h * w + y)] = a[size_t((b * h * w + y) * c + ic)];
  return out;
}

/// The channels-last calls on the same convolution, and the kernel
/// gradients added into what their arrays held (gradient accumulators) in
/// both layouts.
void checkChannelsLastAndAdded(const Conv &s, const std::vector<float> &x,
                               const std::vector<float> &w, const std::vector<float> &dy,
                               const std::vector<double> &y, const std::vector<double> &dx,
                               const std::vector<double> &dw, unsigned seed) {
  std::vector<float> xl = toChannelsLast(x, s.n, s.c, s.h, s.w),
                     dyl = toChannelsLast(dy, s.n, s.o, s.oh(), s.ow());
  std::vector<float> gotY(y.size()), gotDx(dx.size()), gotDw(dw.size());
  sinter_cpu_conv2d_nhwc_f32(xl.data(), w.data(), gotY.data(), s.n, s.c, s.h, s.w, s.o,
                             s.kh, s.kw, s.oh(), s.ow(), s.sh, s.sw, s.dh, s.dw, s.ph,
                             s.pw);
  sinter_cpu_conv2d_nhwc_backward_data_f32(dyl.data(), w.data(), gotDx.data(), s.n, s.c,
                                           s.h, s.w, s.o, s.kh, s.kw, s.oh(), s.ow(), s.sh,
                                           s.sw, s.dh, s.dw, s.ph, s.pw);
  sinter_cpu_conv2d_nhwc_backward_weights_f32(xl.data(), dyl.data(), gotDw.data(), s.n,
                                              s.c, s.h, s.w, s.o, s.kh, s.kw, s.oh(),
                                              s.ow(), s.sh, s.sw, s.dh, s.dw, s.ph, s.pw);
  expectClose(fromChannelsLast(gotY, s.n, s.o, s.oh(), s.ow()), y,
              double(s.c * s.kh * s.kw), "conv2d, channels last");
  expectClose(fromChannelsLast(gotDx, s.n, s.c, s.h, s.w), dx, double(s.o * s.kh * s.kw),
              "backward data, channels last");
  expectClose(gotDw, dw, double(s.n * s.oh() * s.ow()), "backward weights, channels last");

  std::vector<float> held = randoms(dw.size(), seed);
  std::vector<double> sum(dw.size());
  for (size_t i = 0; i < dw.size(); ++i)
    sum[i] = held[i] + dw[i];
  std::vector<float> added = held, addedLast = held;
  sinter_cpu_conv2d_backward_weights_add_f32(x.data(), dy.data(), added.data(), s.n, s.c,
                                             s.h, s.w, s.o, s.kh, s.kw, s.oh(), s.ow(),
                                             s.sh, s.sw, s.dh, s.dw, s.ph, s.pw);
  sinter_cpu_conv2d_nhwc_backward_weights_add_f32(
      xl.data(), dyl.data(), addedLast.data(), s.n, s.c, s.h, s.w, s.o, s.kh, s.kw,
      s.oh(), s.ow(), s.sh, s.sw, s.dh, s.dw, s.ph, s.pw);
  double terms = double(s.n * s.oh() * s.ow() + 1);
  expectClose(added, sum, terms, "backward weights added");
  expectClose(addedLast, sum, terms, "backward weights added, channels last");
}

void checkConvolution(const Conv &s, unsigned seed) {
  std::vector<float> x = randoms(size_t(s.n * s.c * s.h * s.w), seed);
  std::vector<float> w = randoms(size_t(s.o * s.c * s.kh * s.kw), seed + 1);
  std::vector<float> dy = randoms(size_t(s.n * s.o * s.oh() * s.ow()), seed + 2);
  std::vector<double> y(dy.size()), dx(x.size()), dw(w.size());
  s.each([&](int64_t b, int64_t oc, int64_t i, int64_t j, int64_t ic, int64_t u,
             int64_t v, int64_t yy, int64_t xx) {
    y[s.yAt(b, oc, i, j)] += double(x[s.xAt(b, ic, yy, xx)]) * w[s.wAt(oc, ic, u, v)];
    dx[s.xAt(b, ic, yy, xx)] += double(dy[s.yAt(b, oc, i, j)]) * w[s.wAt(oc, ic, u, v)];
    dw[s.wAt(oc, ic, u, v)] += double(dy[s.yAt(b, oc, i, j)]) * x[s.xAt(b, ic, yy, xx)];
  });

  std::vector<float> xp = padded(s, x);
  std::vector<float> gotY(y.size()), gotYOfPadded(y.size()), gotDx(dx.size()),
      gotDw(dw.size());
  sinter_cpu_conv2d_f32(x.data(), w.data(), gotY.data(), s.n, s.c, s.h, s.w, s.o, s.kh,
                        s.kw, s.oh(), s.ow(), s.sh, s.sw, s.dh, s.dw, s.ph, s.pw);
  sinter_cpu_conv2d_f32(xp.data(), w.data(), gotYOfPadded.data(), s.n, s.c,
                        s.h + 2 * s.ph, s.w + 2 * s.pw, s.o, s.kh, s.kw, s.oh(), s.ow(),
                        s.sh, s.sw, s.dh, s.dw, 0, 0);
  sinter_cpu_conv2d_backward_data_f32(dy.data(), w.data(), gotDx.data(), s.n, s.c, s.h,
                                      s.w, s.o, s.kh, s.kw, s.oh(), s.ow(), s.sh, s.sw,
                                      s.dh, s.dw, s.ph, s.pw);
  sinter_cpu_conv2d_backward_weights_f32(x.data(), dy.data(), gotDw.data(), s.n, s.c, s.h,
                                         s.w, s.o, s.kh, s.kw, s.oh(), s.ow(), s.sh, s.sw,
                                         s.dh, s.dw, s.ph, s.pw);
  expectClose(gotY, y, double(s.c * s.kh * s.kw), "conv2d");
  expectClose(gotYOfPadded, y, double(s.c * s.kh * s.kw), "conv2d of a padded copy");
  expectClose(gotDx, dx, double(s.o * s.kh * s.kw), "backward data");
  expectClose(gotDw, dw, double(s.n * s.oh() * s.ow()), "backward weights");
  checkChannelsLastAndAdded(s, x, w, dy, y, dx, dw, seed + 3);
}

TEST(Dnnl, ConvolutionsOfGrowingAndShrinkingShapes) {
  // Channel counts that blocked layouts hold (multiples of 16 and 8), odd
  // ones, strides, a dilation and a 1x1; larger then smaller again, so the
  // shared scratch serves shapes of other sizes than the one it grew for.
  const Conv shapes[] = {
      {2, 16, 9, 9, 32, 3, 3, 1, 1, 1, 1, 1, 1},
      {3, 32, 12, 10, 64, 3, 3, 2, 2, 1, 1, 1, 1},
      {2, 3, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1},
      {1, 24, 11, 11, 40, 3, 3, 1, 1, 2, 2, 2, 2},
      {2, 64, 6, 6, 32, 1, 1, 2, 2, 1, 1, 0, 0},
      {2, 16, 9, 9, 32, 3, 3, 1, 1, 1, 1, 1, 1},
  };
  unsigned seed = 1;
  for (const Conv &s : shapes) {
    SCOPED_TRACE("c=" + std::to_string(s.c) + " o=" + std::to_string(s.o) +
                 " h=" + std::to_string(s.h));
    checkConvolution(s, seed += 3);
  }
}

using ConvCall = void (*)(const float *, const float *, float *, int64_t, int64_t, int64_t,
                         int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                         int64_t, int64_t, int64_t, int64_t, int64_t);

/// The implementation each of abi.h's eight convolution calls runs for `s`.
std::vector<std::string> implementations(const Conv &s) {
  const ConvCall calls[] = {sinter_cpu_conv2d_f32,
                            sinter_cpu_conv2d_backward_data_f32,
                            sinter_cpu_conv2d_backward_weights_f32,
                            sinter_cpu_conv2d_backward_weights_add_f32,
                            sinter_cpu_conv2d_nhwc_f32,
                            sinter_cpu_conv2d_nhwc_backward_data_f32,
                            sinter_cpu_conv2d_nhwc_backward_weights_f32,
                            sinter_cpu_conv2d_nhwc_backward_weights_add_f32};
  // Each array as large as the largest argument: the calls take x, w, y
  // and their gradients in different positions.
  size_t largest = size_t(std::max({s.n * s.c * s.h * s.w, s.n * s.o * s.oh() * s.ow(),
                                    s.o * s.c * s.kh * s.kw}));
  std::vector<float> a(largest, 0.5f), b(largest, 0.25f), out(largest, 0.0f);
  std::vector<std::string> found;
  for (ConvCall call : calls) {
    call(a.data(), b.data(), out.data(), s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, s.oh(),
         s.ow(), s.sh, s.sw, s.dh, s.dw, s.ph, s.pw);
    found.push_back(sinter::rt::dnnl::lastConvolutionImplementation());
  }
  return found;
}

/// Allows Winograd convolutions for its lifetime, whatever a test asserts.
struct WinogradAllowed {
  WinogradAllowed() { EXPECT_TRUE(sinter::rt::hostDevice().allowWinogradConvolutions(true).ok()); }
  ~WinogradAllowed() { (void)sinter::rt::hostDevice().allowWinogradConvolutions(false); }
};

/// A grouped convolution's three passes, NCHW and channels last, against
/// float64 sums: output channel oc reads input channels g * c / groups on,
/// g = oc / (o / groups), through w[oc, c / groups, kh, kw].
void checkGrouped(const Conv &s, int64_t groups) {
  int64_t cg = s.c / groups, og = s.o / groups, oh = s.oh(), ow = s.ow();
  auto x = randoms(size_t(s.n * s.c * s.h * s.w), 11);
  auto w = randoms(size_t(s.o * cg * s.kh * s.kw), 12);
  auto dy = randoms(size_t(s.n * s.o * oh * ow), 13);
  std::vector<double> y(dy.size()), dx(x.size()), dw(w.size());
  for (int64_t b = 0; b < s.n; ++b)
    for (int64_t oc = 0; oc < s.o; ++oc)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j)
          for (int64_t k = 0; k < cg; ++k)
            for (int64_t u = 0; u < s.kh; ++u)
              for (int64_t v = 0; v < s.kw; ++v) {
                int64_t yy = i * s.sh + u * s.dh - s.ph, xx = j * s.sw + v * s.dw - s.pw;
                if (yy < 0 || yy >= s.h || xx < 0 || xx >= s.w)
                  continue;
                size_t xi = s.xAt(b, oc / og * cg + k, yy, xx);
                size_t wi = size_t(((oc * cg + k) * s.kh + u) * s.kw + v);
                size_t yi = s.yAt(b, oc, i, j);
                y[yi] += double(x[xi]) * w[wi];
                dx[xi] += double(dy[yi]) * w[wi];
                dw[wi] += double(dy[yi]) * x[xi];
              }
  std::vector<float> gotY(y.size()), gotDx(dx.size()), gotDw(dw.size()),
      addedDw(dw.size(), 1.0f);
  sinter_cpu_conv2d_grouped_f32(x.data(), w.data(), gotY.data(), s.n, s.c, s.h, s.w, s.o,
                                s.kh, s.kw, oh, ow, s.sh, s.sw, s.dh, s.dw, s.ph, s.pw,
                                groups);
  sinter_cpu_conv2d_grouped_backward_data_f32(dy.data(), w.data(), gotDx.data(), s.n, s.c,
                                              s.h, s.w, s.o, s.kh, s.kw, oh, ow, s.sh, s.sw,
                                              s.dh, s.dw, s.ph, s.pw, groups);
  sinter_cpu_conv2d_grouped_backward_weights_f32(x.data(), dy.data(), gotDw.data(), s.n,
                                                 s.c, s.h, s.w, s.o, s.kh, s.kw, oh, ow,
                                                 s.sh, s.sw, s.dh, s.dw, s.ph, s.pw, groups);
  sinter_cpu_conv2d_grouped_backward_weights_add_f32(
      x.data(), dy.data(), addedDw.data(), s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, oh, ow, s.sh,
      s.sw, s.dh, s.dw, s.ph, s.pw, groups);
  double terms = double(cg * s.kh * s.kw), batchTerms = double(s.n * oh * ow);
  expectClose(gotY, y, terms, "grouped conv2d");
  expectClose(gotDx, dx, double(og * s.kh * s.kw), "grouped input gradient");
  expectClose(gotDw, dw, batchTerms, "grouped kernel gradient");
  std::vector<double> dwPlusOne(dw);
  for (double &v : dwPlusOne)
    v += 1.0;
  expectClose(addedDw, dwPlusOne, batchTerms, "grouped kernel gradient, added");
  // Channels last: the same numbers, x, y, dy and dx stored NHWC.
  auto xl = toChannelsLast(x, s.n, s.c, s.h, s.w);
  auto dyl = toChannelsLast(dy, s.n, s.o, oh, ow);
  std::vector<float> lastY(y.size()), lastDx(dx.size()), lastDw(dw.size());
  sinter_cpu_conv2d_grouped_nhwc_f32(xl.data(), w.data(), lastY.data(), s.n, s.c, s.h, s.w,
                                     s.o, s.kh, s.kw, oh, ow, s.sh, s.sw, s.dh, s.dw, s.ph,
                                     s.pw, groups);
  sinter_cpu_conv2d_grouped_nhwc_backward_data_f32(dyl.data(), w.data(), lastDx.data(), s.n,
                                                   s.c, s.h, s.w, s.o, s.kh, s.kw, oh, ow,
                                                   s.sh, s.sw, s.dh, s.dw, s.ph, s.pw,
                                                   groups);
  sinter_cpu_conv2d_grouped_nhwc_backward_weights_f32(
      xl.data(), dyl.data(), lastDw.data(), s.n, s.c, s.h, s.w, s.o, s.kh, s.kw, oh, ow, s.sh,
      s.sw, s.dh, s.dw, s.ph, s.pw, groups);
  expectClose(fromChannelsLast(lastY, s.n, s.o, oh, ow), y, terms,
              "grouped conv2d, channels last");
  expectClose(fromChannelsLast(lastDx, s.n, s.c, s.h, s.w), dx, double(og * s.kh * s.kw),
              "grouped input gradient, channels last");
  expectClose(lastDw, dw, batchTerms, "grouped kernel gradient, channels last");
}

TEST(Dnnl, GroupedAndDepthwiseConvolutions) {
  // Depthwise with two kernels a channel (oneDNN's depthwise kernels take
  // 16 channels and more), and two groups of three channels, strided and
  // dilated.
  checkGrouped({2, 16, 9, 9, 32, 3, 3, 1, 1, 1, 1, 1, 1}, 16);
  checkGrouped({2, 6, 9, 8, 4, 3, 2, 2, 1, 2, 1, 2, 0}, 2);
}

TEST(Dnnl, WinogradWhereAllowedAndItFits) {
  // precision.convolution WINOGRAD: 3x3, stride-1 convolutions with at
  // least 16 input channels and 8x8 outputs run oneDNN's Winograd kernel
  // in every pass and layout (on a CPU with AVX-512's core instructions,
  // where oneDNN has it),
  // and stay within the bound a direct float32 sum keeps to float64 (its
  // transforms round more than direct products do, but not past it); the
  // others stay direct.
  std::optional<WinogradAllowed> allowed(std::in_place);
  bool hasWinograd = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                     __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                     !std::getenv("ONEDNN_MAX_CPU_ISA") && !std::getenv("DNNL_MAX_CPU_ISA");
  const Conv fits[] = {
      {2, 16, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1},
      {3, 32, 12, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1},
      {2, 64, 9, 11, 64, 3, 3, 1, 1, 1, 1, 1, 1},
  };
  const Conv direct[] = {
      {2, 32, 16, 16, 32, 3, 3, 2, 2, 1, 1, 1, 1}, // strided
      {2, 8, 16, 16, 32, 3, 3, 1, 1, 1, 1, 1, 1},  // 8 input channels
      {2, 64, 4, 4, 64, 3, 3, 1, 1, 1, 1, 1, 1},   // 4x4 outputs
      {2, 32, 4, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1},  // 4x32 outputs: too few rows
      {2, 32, 12, 12, 32, 3, 3, 1, 1, 1, 1, 2, 2}, // padding 2
      {2, 32, 12, 12, 32, 1, 1, 1, 1, 1, 1, 0, 0}, // 1x1
  };
  unsigned seed = 100;
  for (const Conv &s : fits) {
    SCOPED_TRACE("fits: c=" + std::to_string(s.c) + " h=" + std::to_string(s.h));
    for (const std::string &used : implementations(s))
      EXPECT_EQ(used.find("wino") != std::string::npos, hasWinograd) << used;
    checkConvolution(s, seed += 3);
  }
  for (const Conv &s : direct) {
    SCOPED_TRACE("direct: c=" + std::to_string(s.c) + " h=" + std::to_string(s.h));
    for (const std::string &used : implementations(s))
      EXPECT_EQ(used.find("wino"), std::string::npos) << used;
    checkConvolution(s, seed += 3);
  }
  // Allowed no longer: the same shapes run direct, as precisely as ever.
  allowed.reset();
  for (const std::string &used : implementations(fits[0]))
    EXPECT_EQ(used.find("wino"), std::string::npos) << used;
  checkConvolution(fits[0], seed += 3);
}

TEST(Dnnl, ShortWideRowsRunTheDirectKernel) {
  // Forward passes over at least 256 input channels whose output rows are
  // at most 7 long and span at most 8 input columns run oneDNN's direct
  // kernel, not the brgemm one it prefers on NHWC (bench/NOTES.md 22); the
  // others keep oneDNN's choice. Both stay within the float32 bound.
  bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                !std::getenv("ONEDNN_MAX_CPU_ISA") && !std::getenv("DNNL_MAX_CPU_ISA");
  const Conv shortWide[] = {
      {2, 256, 4, 4, 32, 3, 3, 1, 1, 1, 1, 1, 1}, // 4x4, stride 1
      {2, 256, 8, 8, 48, 3, 3, 2, 2, 1, 1, 1, 1}, // 8x8 into 4x4
      {2, 512, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1}, // 7x7
  };
  const Conv others[] = {
      {2, 64, 4, 4, 32, 3, 3, 1, 1, 1, 1, 1, 1},    // 64 channels
      {2, 256, 14, 14, 32, 3, 3, 2, 2, 1, 1, 1, 1}, // stride-2 rows of 14 columns
      {2, 256, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1},   // rows of 8
  };
  const size_t nhwcForward = 4; // implementations()'s order
  unsigned seed = 300;
  for (const Conv &s : shortWide) {
    SCOPED_TRACE("short: c=" + std::to_string(s.c) + " h=" + std::to_string(s.h));
    std::string used = implementations(s)[nhwcForward];
    EXPECT_EQ(used.find("brg"), std::string::npos) << used;
    checkConvolution(s, seed += 3);
  }
  for (const Conv &s : others) {
    SCOPED_TRACE("others: c=" + std::to_string(s.c) + " h=" + std::to_string(s.h));
    std::string used = implementations(s)[nhwcForward];
    EXPECT_EQ(used.find("brg") == 0, avx512) << used;
    checkConvolution(s, seed += 3);
  }
}

TEST(Dnnl, MatmulOverwritesOrAccumulates) {
  const int64_t m = 7, n = 33, k = 20;
  std::vector<float> a = randoms(size_t(m * k), 11), b = randoms(size_t(k * n), 12);
  std::vector<double> product(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t l = 0; l < k; ++l)
        product[size_t(i * n + j)] += double(a[size_t(i * k + l)]) * b[size_t(l * n + j)];
  std::vector<float> c(product.size(), 5.0f);
  sinter_cpu_matmul_f32(a.data(), b.data(), c.data(), 1, m, n, k, 0, nullptr);
  expectClose(c, product, double(k), "C = A B");
  std::vector<float> onto(product.size(), 5.0f);
  std::vector<double> plusFive(product);
  for (double &v : plusFive)
    v += 5.0;
  sinter_cpu_matmul_f32(a.data(), b.data(), onto.data(), 1, m, n, k, 8, nullptr);
  expectClose(onto, plusFive, double(k), "C += A B");
  // Bit 4: a bias over the columns, whatever c held before.
  std::vector<float> bias = randoms(size_t(n), 13);
  std::vector<double> plusBias(product);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      plusBias[size_t(i * n + j)] += bias[size_t(j)];
  std::vector<float> biased(product.size(), 5.0f);
  sinter_cpu_matmul_f32(a.data(), b.data(), biased.data(), 1, m, n, k, 16, bias.data());
  expectClose(biased, plusBias, double(k), "C = A B + bias");
}

/// The bf16 nearest to x (ties to even): its 16-bit pattern.
uint16_t toBF16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

double fromBF16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

using MatmulBF16 = void (*)(const uint16_t *, const uint16_t *, float *, int64_t, int64_t,
                            int64_t, int64_t, int64_t, const float *);

/// Every form of abi.h's flags (B shared by a batch of 3 or one per batch,
/// B or A stored transposed, C overwritten or added to), against float64
/// sums of the same bf16 values: exact products summed in f32 are within an
/// f32 sum's error of them. A kernel that rounded its sums to bf16 would be
/// off by 2^-9 of their size. With `withBias`, bit 4 too.
void checkMatmulBF16(MatmulBF16 matmul, bool withBias = true) {
  const int64_t m = 9, n = 40, k = 70;
  for (int64_t flags = 0; flags < 16; ++flags) {
    bool sharedB = flags & 1, transposedB = flags & 2, transposedA = flags & 4,
         accumulate = flags & 8;
    int64_t batch = transposedA ? 1 : 3, batchB = sharedB ? 1 : batch;
    SCOPED_TRACE("flags " + std::to_string(flags));
    std::vector<float> af = randoms(size_t(batch * m * k), 21 + unsigned(flags)),
                       bf = randoms(size_t(batchB * k * n), 41 + unsigned(flags));
    std::vector<uint16_t> a(af.size()), b(bf.size());
    for (size_t i = 0; i < af.size(); ++i)
      a[i] = toBF16(af[i]);
    for (size_t i = 0; i < bf.size(); ++i)
      b[i] = toBF16(bf[i]);
    std::vector<double> want(size_t(batch * m * n), accumulate ? 0.5 : 0.0);
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t l = 0; l < k; ++l) {
            size_t ai = size_t(transposedA ? l * m + i : (p * m + i) * k + l);
            int64_t q = sharedB ? 0 : p;
            size_t bi = size_t(transposedB ? (q * n + j) * k + l : (q * k + l) * n + j);
            want[size_t((p * m + i) * n + j)] += fromBF16(a[ai]) * fromBF16(b[bi]);
          }
    std::vector<float> c(want.size(), 0.5f);
    matmul(a.data(), b.data(), c.data(), batch, m, n, k, flags, nullptr);
    expectClose(c, want, double(k), "C (+)= A B in bf16");
    // Bit 4 instead of bit 3 (not batched): a bias over the columns.
    if (!withBias || batch != 1 || accumulate)
      continue;
    std::vector<float> bias = randoms(size_t(n), 61 + unsigned(flags));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        want[size_t(i * n + j)] += bias[size_t(j)];
    std::vector<float> biased(want.size(), 0.5f);
    matmul(a.data(), b.data(), biased.data(), batch, m, n, k, flags | 16, bias.data());
    expectClose(biased, want, double(k), "C = A B + bias in bf16");
  }
}

using MatmulBF16Rounded = void (*)(const uint16_t *, const uint16_t *, uint16_t *, int64_t,
                                   int64_t, int64_t, int64_t, int64_t, const uint16_t *);

/// abi.h's rounded bf16 matmul, in every form of its flags and with a bf16
/// bias (bit 4): the float64 sum of the same bf16 products (plus the bias,
/// or plus c's bf16 values with bit 3) rounded to the nearest bf16 once.
/// f32 sums may fall on the other side of a rounding boundary now and then
/// (at most half a bf16 step and a hair away); a kernel that truncated, or
/// rounded twice, would miss the nearest value in a good share of elements.
void checkMatmulBF16Rounded(MatmulBF16Rounded matmul) {
  const int64_t m = 9, n = 40, k = 70;
  // Flags 0-15, then 16 alone: the bias (not batched, not added to c).
  for (int64_t flags = 0; flags <= 16; ++flags) {
    bool sharedB = flags & 1, transposedB = flags & 2, transposedA = flags & 4,
         accumulate = flags & 8, bias = flags & 16;
    int64_t batch = transposedA || bias ? 1 : 3, batchB = sharedB ? 1 : batch;
    SCOPED_TRACE("flags " + std::to_string(flags));
    std::vector<float> af = randoms(size_t(batch * m * k), 23 + unsigned(flags)),
                       bf = randoms(size_t(batchB * k * n), 43 + unsigned(flags)),
                       cf = randoms(size_t(batch * m * n), 63 + unsigned(flags));
    std::vector<uint16_t> a(af.size()), b(bf.size()), c(cf.size()), rows(static_cast<size_t>(n));
    for (size_t i = 0; i < af.size(); ++i)
      a[i] = toBF16(af[i]);
    for (size_t i = 0; i < bf.size(); ++i)
      b[i] = toBF16(bf[i]);
    for (size_t i = 0; i < cf.size(); ++i)
      c[i] = toBF16(cf[i]);
    for (size_t j = 0; j < rows.size(); ++j)
      rows[j] = toBF16(cf[j] * 4.0f);
    std::vector<double> want(c.size(), 0.0);
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = accumulate ? fromBF16(c[size_t((p * m + i) * n + j)])
                       : bias     ? fromBF16(rows[size_t(j)])
                                  : 0.0;
          for (int64_t l = 0; l < k; ++l) {
            size_t ai = size_t(transposedA ? l * m + i : (p * m + i) * k + l);
            int64_t q = sharedB ? 0 : p;
            size_t bi = size_t(transposedB ? (q * n + j) * k + l : (q * k + l) * n + j);
            sum += fromBF16(a[ai]) * fromBF16(b[bi]);
          }
          want[size_t((p * m + i) * n + j)] = sum;
        }
    matmul(a.data(), b.data(), c.data(), batch, m, n, k, flags, bias ? rows.data() : nullptr);
    size_t nearest = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      // Half a bf16 step at |want| is at most 2^-8 of it.
      double got = fromBF16(c[i]), halfStep = std::ldexp(std::fabs(want[i]), -8);
      EXPECT_LE(std::fabs(got - want[i]), 1.001 * halfStep + 1e-30) << "element " << i;
      nearest += c[i] == toBF16(float(want[i]));
    }
    EXPECT_GE(double(nearest), 0.98 * double(want.size()));
  }
}

TEST(Dnnl, MatmulBF16RoundedRoundsTheF32SumOnce) {
  checkMatmulBF16Rounded(sinter_cpu_matmul_bf16_rounded);
}

TEST(Dnnl, MatmulBF16RoundedWidenedWhereTheCPUHasNone) {
  checkMatmulBF16Rounded([](const uint16_t *a, const uint16_t *b, uint16_t *c,
                            int64_t batch, int64_t m, int64_t n, int64_t k, int64_t flags,
                            const uint16_t *bias) {
    // The ABI's bias as c's rows, added (what the runtime does before it).
    if (flags & 16) {
      for (int64_t row = 0; row < m; ++row)
        std::memcpy(c + row * n, bias, size_t(n) * sizeof(uint16_t));
      flags = (flags & ~int64_t(16)) | 8;
    }
    sinter::rt::matmulBF16RoundedWidened(a, b, c, batch, m, n, k, flags);
  });
}

TEST(Dnnl, MatmulBF16SumsExactProductsInF32) {
  checkMatmulBF16(sinter_cpu_matmul_bf16);
}

TEST(Dnnl, MatmulBF16WidenedWhereTheCPUHasNone) {
  checkMatmulBF16(
      [](const uint16_t *a, const uint16_t *b, float *c, int64_t batch, int64_t m,
         int64_t n, int64_t k, int64_t flags, const float *) {
        sinter::rt::matmulBF16Widened(a, b, c, batch, m, n, k, flags);
      },
      /*withBias=*/false);
}

} // namespace
