//===- FastSampling.h - Cheap random batches for synthetic data -*- C++ -*-===//
//
// `synthetic {}` data makes a batch's inputs on the loader thread while the
// step computes, so its cost comes out of the step's cores. Init.h's
// samplers match a float64 reference bit for bit, at about 60 ns a normal;
// these do a sample in a few ns: one Philox block makes four values, and the
// arithmetic is float32 without branches, so the loops vectorize.
//
// Each value is still a function of (stream, element index) alone, so any
// batching, sharding or threading of the same elements sees the same values.
// Only + - * / sqrt and integer operations are used, compiled without
// contraction: every IEEE-754 machine computes the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_CORE_FASTSAMPLING_H
#define SINTER_RT_CORE_FASTSAMPLING_H

#include "core/Philox.h"

#include <cstdint>

namespace sinter::rt {

/// Standard normal values for elements [first, first + count) of `stream`.
/// Element i comes from Philox block i / 4: its words (0, 1) and (2, 3) are
/// two Box-Muller pairs (radius from the first word, angle from the second),
/// and i % 2 picks the cosine or the sine. Radii are at most 5.77 (the
/// uniform has 24 bits); each value is within a few float32 ulp of its
/// radius of the exact one (an absolute error: values near 0 have few
/// correct digits).
void fastStandardNormals(const PhiloxStream &stream, uint64_t first, uint64_t count,
                         float *out);

/// Integers uniform in [0, bound) for elements [first, first + count) of
/// `stream`, bound >= 1: element i is word i % 4 of Philox block i / 4,
/// scaled by (word * bound) >> 32 (a bias of at most bound / 2^32).
void fastUniformIntegers(const PhiloxStream &stream, uint64_t first, uint64_t count,
                         uint32_t bound, int64_t *out);

} // namespace sinter::rt

#endif // SINTER_RT_CORE_FASTSAMPLING_H
