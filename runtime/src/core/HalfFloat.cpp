//===- HalfFloat.cpp - float16 and bfloat16 conversions -------------------===//

#include "core/HalfFloat.h"

#include <cmath>
#include <cstring>

namespace sinter::rt {
namespace {

/// |d| rounded to nearest even into a binary format with `expBits` exponent
/// and `manBits` mantissa bits, with the sign bit on top. Scaling by powers
/// of two is exact and nearbyint rounds to nearest even, so this rounds once.
uint16_t toSmallFloat(double d, int expBits, int manBits) {
  uint16_t sign = std::signbit(d) ? (uint16_t)(1u << (expBits + manBits)) : 0;
  uint16_t expMask = (uint16_t)((1u << expBits) - 1);
  if (std::isnan(d))
    return (uint16_t)(sign | expMask << manBits | 1u << (manBits - 1));
  double a = std::fabs(d);
  if (std::isinf(a))
    return (uint16_t)(sign | expMask << manBits);
  if (a == 0)
    return sign;
  int bias = (1 << (expBits - 1)) - 1;
  int emin = 1 - bias;
  int e;
  std::frexp(a, &e);
  int exponent = e - 1; // a = 1.f * 2^exponent
  if (exponent < emin) {
    // Subnormal: an integer number of units of 2^(emin - manBits); a
    // carry into 1 << manBits is exactly the smallest normal's pattern.
    double q = std::nearbyint(std::ldexp(a, manBits - emin));
    return (uint16_t)(sign | (uint16_t)q);
  }
  double q = std::nearbyint(std::ldexp(a, manBits - exponent));
  if (q >= std::ldexp(1.0, manBits + 1)) {
    q = q / 2;
    exponent += 1;
  }
  if (exponent > bias)
    return (uint16_t)(sign | expMask << manBits);
  uint32_t mant = (uint32_t)q - (1u << manBits);
  return (uint16_t)(sign | (uint32_t)(exponent + bias) << manBits | mant);
}

double fromSmallFloat(uint16_t bits, int expBits, int manBits) {
  bool negative = bits >> (expBits + manBits) & 1;
  int expField = bits >> manBits & ((1 << expBits) - 1);
  uint32_t mant = bits & ((1u << manBits) - 1);
  int bias = (1 << (expBits - 1)) - 1;
  double v;
  if (expField == (1 << expBits) - 1)
    v = mant ? NAN : INFINITY;
  else if (expField == 0)
    v = std::ldexp((double)mant, 1 - bias - manBits);
  else
    v = std::ldexp((double)(mant | 1u << manBits), expField - bias - manBits);
  return negative ? -v : v;
}

} // namespace

uint16_t doubleToHalf(double d) { return toSmallFloat(d, 5, 10); }
uint16_t doubleToBFloat16(double d) { return toSmallFloat(d, 8, 7); }
double halfToDouble(uint16_t h) { return fromSmallFloat(h, 5, 10); }
double bfloat16ToDouble(uint16_t b) { return fromSmallFloat(b, 8, 7); }

} // namespace sinter::rt
