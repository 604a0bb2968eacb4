//===- Philox.h - The Philox-4x32-10 counter-based generator ----*- C++ -*-===//
//
// Salmon, Moraes, Dror, Shaw, "Parallel random numbers: as easy as 1, 2, 3"
// (SC'11): a keyed bijection of a 128-bit counter, 10 rounds, written here
// from the published algorithm and checked against Random123's known-answer
// vectors. Because output i depends only on (key, counter i), any element of
// a stream can be computed on its own: shards and threads need no state.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_CORE_PHILOX_H
#define SINTER_RT_CORE_PHILOX_H

#include <array>
#include <cstdint>
#include <string_view>

namespace sinter::rt {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

/// One Philox-4x32 block with 10 rounds.
inline PhiloxCounter philox4x32x10(PhiloxCounter c, PhiloxKey k) {
  constexpr uint32_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57;
  constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) { // the key schedule: bump before every round but the first
      k[0] += kWeyl0;
      k[1] += kWeyl1;
    }
    uint64_t p0 = (uint64_t)kMul0 * c[0];
    uint64_t p1 = (uint64_t)kMul1 * c[2];
    c = {(uint32_t)(p1 >> 32) ^ c[1] ^ k[0], (uint32_t)p1,
         (uint32_t)(p0 >> 32) ^ c[3] ^ k[1], (uint32_t)p0};
  }
  return c;
}

/// FNV-1a, 64 bits, over the bytes of `s`: the stream id of a name.
inline uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s) {
    h ^= (uint8_t)c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// The random stream named by (seed, 64-bit stream id): element i is the
/// Philox block of key (seed lo, seed hi) and counter (i lo, i hi, id lo,
/// id hi), returned as two 64-bit words (word0 | word1 << 32, word2 | word3
/// << 32).
struct PhiloxStream {
  uint64_t seed;
  uint64_t id;

  std::array<uint64_t, 2> at(uint64_t i) const {
    PhiloxCounter r = philox4x32x10({(uint32_t)i, (uint32_t)(i >> 32), (uint32_t)id,
                                     (uint32_t)(id >> 32)},
                                    {(uint32_t)seed, (uint32_t)(seed >> 32)});
    return {(uint64_t)r[0] | (uint64_t)r[1] << 32, (uint64_t)r[2] | (uint64_t)r[3] << 32};
  }
};

} // namespace sinter::rt

#endif // SINTER_RT_CORE_PHILOX_H
