//===- Crc32c.cpp - CRC-32C (Castagnoli) of a byte range ------------------===//

#include "support/Crc32c.h"

namespace sinter::rt {
namespace {

/// The Castagnoli polynomial 0x1EDC6F41, bit-reversed: the CRC is computed
/// least significant bit first, as the standard defines it.
constexpr uint32_t kPolynomial = 0x82F63B78;

/// table[0][b]: the CRC of byte b alone (no pre- or post-inversion).
/// table[k][b]: the same byte followed by k zero bytes, so that eight bytes
/// combine into the CRC with eight independent look-ups.
struct Tables {
  uint32_t table[8][256] = {};

  constexpr Tables() {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t c = b;
      for (int bit = 0; bit < 8; ++bit)
        c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
      table[0][b] = c;
    }
    for (int k = 1; k < 8; ++k)
      for (uint32_t b = 0; b < 256; ++b) {
        uint32_t prev = table[k - 1][b];
        table[k][b] = (prev >> 8) ^ table[0][prev & 0xff];
      }
  }
};

constexpr Tables kTables;

/// Four bytes as a little-endian word, whatever the machine's byte order.
inline uint32_t loadLE32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}

} // namespace

uint32_t crc32c(const void *data, size_t n, uint32_t crc) {
  const auto &t = kTables.table;
  const uint8_t *p = static_cast<const uint8_t *>(data);
  crc = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo = loadLE32(p) ^ crc;
    uint32_t hi = loadLE32(p + 4);
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^
          t[4][lo >> 24] ^ t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
          t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  for (; n > 0; --n, ++p)
    crc = (crc >> 8) ^ t[0][(crc ^ *p) & 0xff];
  return ~crc;
}

} // namespace sinter::rt
