//===- Init.h - Parameter initialisers (LANGUAGE.md section 6) --*- C++ -*-===//
//
// Every value depends only on (seed, the parameter's full name, the
// element's flat C-order index), never on declaration order, world size,
// sharding, threads or which slice is being filled: fill() takes the slice
// [firstElement, firstElement + count) of the whole tensor.
//
// THE RECIPE (test/Runtime/init_reference.py reproduces it bit for bit; any
// other implementation must follow it exactly):
//
//   h      = FNV-1a 64 of the name's UTF-8 bytes (offset basis
//            0xcbf29ce484222325, prime 0x100000001b3)
//   block  = Philox-4x32-10(counter = (lo32(i), hi32(i), lo32(h), hi32(h)),
//                           key = (lo32(seed), hi32(seed)))    -> w0 w1 w2 w3
//   x      = w0 | w1 << 32,  y = w2 | w3 << 32                 (uint64)
//   u      = (x >> 11) * 2^-53          in [0, 1)
//   v      = ((y >> 11) + 1) * 2^-53    in (0, 1]
// then, in double precision, with the deterministic functions of DetMath.h
// (log, cos2pi, normalCdf, normalQuantile; only IEEE-754 + - * / sqrt):
//   uniform(lo, hi)        r = lo + (hi - lo) * u
//   normal(mean, std)      r = mean + std * (sqrt(-2 * log(v)) * cos2pi(u))
//                            (Box-Muller; the sine half is not used, so an
//                            element needs only its own block)
//   trunc_normal(mean, std, a, b)   a, b are absolute cut-offs, as in
//                            PyTorch's trunc_normal_:
//                            al = (a - mean) / std, be = (b - mean) / std;
//                            flip = al + be > 0; if flip: (al, be) = (-be, -al)
//                            pa = normalCdf(al), pb = normalCdf(be)
//                            z = normalQuantile(pa + (pb - pa) * u)
//                            if flip: z = -z
//                            r = min(max(mean + std * z, a), b)
//                            (flipping keeps the quantile away from p near 1,
//                            where it would lose precision)
//   kaiming_uniform(fan_in, a=0)    uniform(-bound, bound),
//                            bound = sqrt(6 / ((1 + a*a) * fan_in))
//   kaiming_normal(fan_in, gain)    normal(0, gain / sqrt(fan_in))
//   xavier_uniform(fan_in, fan_out) uniform(-bound, bound),
//                            bound = sqrt(6 / (fan_in + fan_out))
//   zeros, ones, constant(c)        r = 0, 1, c (no random numbers)
// Storing: f64 stores r; f32 stores (float)r, rounded to nearest even. For
// the uniform family the result must stay below hi: if the stored value is
// >= hi in the stored type ((float)hi for f32) it becomes the next value
// below it, nextafter(hi, -inf) (for f32 only when (float)lo < (float)hi).
// (All bounds are exact: sqrt, /, the conversions and nextafter are
// correctly rounded everywhere.)
// zeros/ones/constant also fill f16, bf16 (rounded to nearest even from the
// double), i64, i32 (c must be a whole number in range) and bool (c must be
// 0 or 1); the random initialisers fill f32 and f64 only.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_CORE_INIT_H
#define SINTER_RT_CORE_INIT_H

#include "sinter/rt/DType.h"
#include "sinter/rt/Shape.h"
#include "sinter/rt/Status.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace sinter::rt {

enum class InitKind {
  Zeros,
  Ones,
  Constant,       // (value)
  Normal,         // (mean, std)
  Uniform,        // (lo, hi)
  TruncNormal,    // (mean, std, a, b)
  KaimingUniform, // (fan_in, a = 0)
  KaimingNormal,  // (fan_in, gain)
  XavierUniform,  // (fan_in, fan_out)
};

/// The language's spelling: "zeros", "trunc_normal", "kaiming_uniform", ...
const char *initKindName(InitKind k);
std::optional<InitKind> parseInitKind(std::string_view name);

/// Fills `out` with elements [firstElement, firstElement + count) (flat
/// C-order indices) of parameter `name` of type `dtype` and shape `shape`,
/// initialised by `init` with arguments `args`, under `seed`. `out` holds
/// `count` elements of `dtype`. Checks the arguments (count, finiteness,
/// std >= 0, lo < hi, a < b, fan_in > 0, ...) and the slice against the
/// shape; messages name the parameter.
Status fill(std::string_view name, InitKind init, const std::vector<double> &args,
            DType dtype, const Shape &shape, uint64_t seed, uint64_t firstElement,
            uint64_t count, void *out);

/// Same, for the whole tensor.
inline Status fillAll(std::string_view name, InitKind init, const std::vector<double> &args,
                      DType dtype, const Shape &shape, uint64_t seed, void *out) {
  std::optional<uint64_t> n = numElements(shape);
  return fill(name, init, args, dtype, shape, seed, 0, n ? *n : UINT64_MAX, out);
}

} // namespace sinter::rt

#endif // SINTER_RT_CORE_INIT_H
