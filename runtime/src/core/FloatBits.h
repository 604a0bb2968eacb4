//===- FloatBits.h - A float's bits and back --------------------*- C++ -*-===//
//
// For arithmetic on the sign, exponent and masks of floats in loops that
// must vectorize (branch-free selects): memcpy, which compilers turn into a
// register move, as C++17 has no std::bit_cast.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_CORE_FLOATBITS_H
#define SINTER_RT_CORE_FLOATBITS_H

#include <cstdint>
#include <cstring>

namespace sinter::rt {

inline uint32_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

inline float floatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

} // namespace sinter::rt

#endif // SINTER_RT_CORE_FLOATBITS_H
