//===- MatmulBF16.h - bf16 matmuls where oneDNN has none ---------*- C++ -*-===//
//
// sinter_cpu_matmul_bf16 (abi.h) runs oneDNN's bf16 matmul where the CPU
// has one (AVX-512 and newer). Elsewhere it widens a and b to f32 and runs
// the f32 matmul: the same products, in the same f32 sums. The same for
// sinter_cpu_matmul_bf16_rounded, whose f32 sums are then rounded.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_CPU_MATMULBF16_H
#define SINTER_RT_CPU_MATMULBF16_H

#include <cstdint>

namespace sinter::rt {

/// sinter_cpu_matmul_bf16 through the f32 matmul.
void matmulBF16Widened(const uint16_t *a, const uint16_t *b, float *c, int64_t batch,
                       int64_t m, int64_t n, int64_t k, int64_t flags);

/// sinter_cpu_matmul_bf16_rounded (no bias) through the f32 matmul, into
/// an f32 copy of c that is then rounded.
void matmulBF16RoundedWidened(const uint16_t *a, const uint16_t *b, uint16_t *c,
                              int64_t batch, int64_t m, int64_t n, int64_t k,
                              int64_t flags);

/// `value` rounded to the nearest bf16, ties to even (its 16-bit pattern).
uint16_t roundToBF16(float value);

} // namespace sinter::rt

#endif // SINTER_RT_CPU_MATMULBF16_H
