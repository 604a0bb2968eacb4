//===- Shape.h - Tensor shapes with overflow-checked sizes -----*- C++ -*-===//
//
// Shapes come from files the runtime does not trust, so every product of
// dimensions is computed with overflow checks: a header that declares
// [2^40, 2^40] elements must be an error, never a wrapped-around small size.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_SHAPE_H
#define SINTER_RT_SHAPE_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sinter::rt {

using Shape = std::vector<uint64_t>;

/// a * b, or nullopt when it does not fit in 64 bits.
inline std::optional<uint64_t> checkedMul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// a + b, or nullopt when it does not fit in 64 bits.
inline std::optional<uint64_t> checkedAdd(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// The number of elements (1 for a scalar), or nullopt on overflow.
inline std::optional<uint64_t> numElements(const Shape &shape) {
  uint64_t n = 1;
  for (uint64_t d : shape) {
    std::optional<uint64_t> m = checkedMul(n, d);
    if (!m)
      return std::nullopt;
    n = *m;
  }
  return n;
}

/// numElements(shape) * itemSize, or nullopt on overflow. A shape with a zero
/// dimension has zero bytes even when another dimension is huge.
inline std::optional<uint64_t> numBytes(const Shape &shape, uint64_t itemSize) {
  for (uint64_t d : shape)
    if (d == 0)
      return 0;
  std::optional<uint64_t> n = numElements(shape);
  return n ? checkedMul(*n, itemSize) : std::nullopt;
}

/// "[1797, 64]"; "[]" for a scalar.
inline std::string formatShape(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace sinter::rt

#endif // SINTER_RT_SHAPE_H
