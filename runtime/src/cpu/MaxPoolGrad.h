//===- MaxPoolGrad.h - Max pooling's gradient, channels last ----*- C++ -*-===//
//
// oneDNN 2.6's max-pool backward pass on NHWC runs the forward pass again
// for its record of each window's maximum, then scatters from it: 5.3 ms
// for a 64 x 64 x 32 x 32 input on 2 cores, eight times its forward pass,
// and 1.0 ms at 6 channels where the forward pass takes 0.04. This one
// finds each window's maximum and places its gradient in the same pass,
// vectorized over the channels, with the rows of windows (or, where
// windows overlap, the images) split between threads.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_CPU_MAXPOOLGRAD_H
#define SINTER_RT_CPU_MAXPOOLGRAD_H

#include <cstdint>

namespace sinter::rt::cpu {

/// A 2-D pooling window over an NHWC array; sizes as abi.h's, NCHW's order.
struct PoolGeometry {
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
};

/// dx = the gradient of max pooling x (NHWC) given dy, its result's: each
/// window's dy goes to the window's first maximum in row-major order (a
/// later equal value does not displace it; padding and NaN never win, and
/// a window with no winner drops its gradient), as the compiler's own
/// lowering places it (PyTorch's differs only there: a NaN wins, and an
/// all -inf window gives its first pixel the gradient); summed in window
/// order where windows overlap.
void maxPoolGradChannelsLast(const float *x, const float *dy, float *dx,
                             const PoolGeometry &g);

} // namespace sinter::rt::cpu

#endif // SINTER_RT_CPU_MAXPOOLGRAD_H
