//===- MaxPoolGrad.cpp - Max pooling's gradient, channels last ------------===//
//
// Built with -fopenmp: its parallel loop runs on the program's OpenMP pool
// (libomp answers GOMP's calls, as it does oneDNN's).
//
//===----------------------------------------------------------------------===//

#include "cpu/MaxPoolGrad.h"

#include "core/FloatBits.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

namespace sinter::rt::cpu {
namespace {

/// Row `oy` of one image's windows: `best` and `unplaced` are scratch of c
/// elements. The loops over the channels are branch-free (masks, not
/// selects of loads), so they vectorize.
void oneRow(const float *image, const float *dy, float *grad, const PoolGeometry &g,
            int64_t oy, bool overwrite, float *__restrict best,
            uint32_t *__restrict unplaced) {
  const int64_t c = g.c;
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  int64_t y0 = std::max<int64_t>(oy * g.sh - g.ph, 0);
  int64_t y1 = std::min(oy * g.sh - g.ph + g.kh, g.h);
  for (int64_t ox = 0; ox < g.ow; ++ox) {
    int64_t x0 = std::max<int64_t>(ox * g.sw - g.pw, 0);
    int64_t x1 = std::min(ox * g.sw - g.pw + g.kw, g.w);
    for (int64_t ch = 0; ch < c; ++ch) {
      best[ch] = kLowest;
      unplaced[ch] = ~0u;
    }
    for (int64_t iy = y0; iy < y1; ++iy)
      for (int64_t ix = x0; ix < x1; ++ix) {
        const float *__restrict v = image + (iy * g.w + ix) * c;
        for (int64_t ch = 0; ch < c; ++ch)
          best[ch] = v[ch] > best[ch] ? v[ch] : best[ch];
      }
    // A window whose values are all -inf or NaN has no winner: nothing
    // compares equal to NaN.
    for (int64_t ch = 0; ch < c; ++ch)
      best[ch] = best[ch] > kLowest ? best[ch] : std::numeric_limits<float>::quiet_NaN();
    const float *__restrict d = dy + (oy * g.ow + ox) * c;
    for (int64_t iy = y0; iy < y1; ++iy)
      for (int64_t ix = x0; ix < x1; ++ix) {
        const float *__restrict v = image + (iy * g.w + ix) * c;
        float *__restrict out = grad + (iy * g.w + ix) * c;
        for (int64_t ch = 0; ch < c; ++ch) {
          uint32_t hit = (0u - uint32_t(v[ch] == best[ch])) & unplaced[ch];
          float share = floatFromBits(floatBits(d[ch]) & hit);
          out[ch] = overwrite ? share : out[ch] + share;
          unplaced[ch] &= ~hit;
        }
      }
  }
}

} // namespace

void maxPoolGradChannelsLast(const float *x, const float *dy, float *dx,
                             const PoolGeometry &g) {
  const int64_t image = g.h * g.w * g.c, pooled = g.oh * g.ow * g.c;
  // Windows that neither overlap nor leave a pixel out write each element
  // of dx once: no zeroing first.
  bool tiles = g.kh == g.sh && g.kw == g.sw && g.ph == 0 && g.pw == 0 &&
               g.oh * g.sh == g.h && g.ow * g.sw == g.w;
#pragma omp parallel
  {
    std::vector<float> best(g.c);
    std::vector<uint32_t> unplaced(g.c);
    if (tiles) {
      // Each row of windows writes its own rows of dx: rows are the work.
#pragma omp for schedule(static)
      for (int64_t row = 0; row < g.n * g.oh; ++row) {
        int64_t n = row / g.oh;
        oneRow(x + n * image, dy + n * pooled, dx + n * image, g, row % g.oh, true,
               best.data(), unplaced.data());
      }
    } else {
      // Windows may share pixels: an image is the work, zeroed first.
#pragma omp for schedule(static)
      for (int64_t n = 0; n < g.n; ++n) {
        std::memset(dx + n * image, 0, sizeof(float) * image);
        for (int64_t oy = 0; oy < g.oh; ++oy)
          oneRow(x + n * image, dy + n * pooled, dx + n * image, g, oy, false, best.data(),
                 unplaced.data());
      }
    }
  }
}

} // namespace sinter::rt::cpu
