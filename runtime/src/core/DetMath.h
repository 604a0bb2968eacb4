//===- DetMath.h - Math that every IEEE-754 machine reproduces --*- C++ -*-===//
//
// libm's log, cos, erfc differ in the last bit between libraries (glibc,
// numpy's SIMD loops, XLA), so initial values computed with them could not be
// reproduced bit for bit by another implementation. These functions use only
// + - * / sqrt floor frexp ldexp on doubles, each correctly rounded by
// IEEE-754, in a fixed order; test/Runtime/init_reference.py performs the
// same operations in numpy and gets the same bits. Accuracy is a few ulp
// (log, exp, cos2pi) to ~1e-13 relative (erfc near 2), plenty for sampling.
//
// This file and its users must be compiled without floating-point
// contraction (-ffp-contract=off): a fused multiply-add rounds once where
// the recipe rounds twice.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_CORE_DETMATH_H
#define SINTER_RT_CORE_DETMATH_H

namespace sinter::rt::detmath {

/// Natural log for finite x > 0: x = m * 2^e with m in [sqrt(1/2), sqrt(2)),
/// f = (m-1)/(m+1), log m = 2f + 2f * (s * P(s)), s = f*f, P the series of
/// atanh (1/3 + s/5 + ... + s^10/23, Horner), log x = e*LN2_HI + (log m +
/// e*LN2_LO).
double log(double x);
/// exp for x <= 0 (0 below -700): k = floor(x/ln2 + 0.5), r = (x - k*LN2_HI)
/// - k*LN2_LO, Taylor polynomial of degree 14 (Horner), times 2^k.
double exp(double x);
/// cos(2*pi*u) for u in [0, 1): quadrant q = floor(4u), r = 4u - q (both
/// exact); x = PI_2 * min(r, 1 - r); Taylor kernels of sin and cos on
/// [0, pi/4] (degree 19 and 18, Horner in x*x); the quadrant picks
/// +-cos or +-sin.
double cos2pi(double u);
/// Complementary error function: 2 - erfc(-y) for y < 0; 1 - erf(y) with 40
/// terms of erf's Maclaurin series for y < 2; else the Laplace continued
/// fraction with 60 terms, evaluated from the bottom: exp(-y*y) *
/// INV_SQRT_PI / t. Used for the normal CDF Phi(x) = 0.5 * erfc(-x*SQRT1_2).
double erfc(double y);
/// Phi(x), with Phi(-inf) = 0 and Phi(+inf) = 1.
double normalCdf(double x);
/// Inverse of Phi for p in (0, 1): Wichura's AS241 (PPND16), with this
/// file's log; -inf for p <= 0, +inf for p >= 1.
double normalQuantile(double p);

} // namespace sinter::rt::detmath

#endif // SINTER_RT_CORE_DETMATH_H
