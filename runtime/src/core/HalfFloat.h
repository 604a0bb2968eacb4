//===- HalfFloat.h - float16 and bfloat16 conversions -----------*- C++ -*-===//
//
// Conversions from double round once, to nearest even (a detour through
// float would round twice and can differ in the last bit).
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_CORE_HALFFLOAT_H
#define SINTER_RT_CORE_HALFFLOAT_H

#include <cstdint>

namespace sinter::rt {

uint16_t doubleToHalf(double d);
uint16_t doubleToBFloat16(double d);
double halfToDouble(uint16_t h);
double bfloat16ToDouble(uint16_t b);

} // namespace sinter::rt

#endif // SINTER_RT_CORE_HALFFLOAT_H
