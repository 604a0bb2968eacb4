//===- Crc32c_test.cpp - CRC-32C against published values -----------------===//

#include "support/Crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

using namespace sinter::rt;

namespace {

/// One bit at a time, straight from the definition: shares nothing with the
/// tables of Crc32c.cpp.
uint32_t bitwiseCrc32c(const uint8_t *p, size_t n) {
  uint32_t crc = 0xFFFFFFFF;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78 : crc >> 1;
  }
  return ~crc;
}

} // namespace

// The check value of the CRC catalogue (reveng.sourceforge.io, CRC-32/ISCSI).
TEST(Crc32c, CheckValue) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
}

// RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32c, Rfc3720Examples) {
  std::vector<uint8_t> zeros(32, 0x00), ones(32, 0xFF), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = (uint8_t)i;
    down[i] = (uint8_t)(31 - i);
  }
  EXPECT_EQ(crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(crc32c(up.data(), 32), 0x46DD794Eu);
  EXPECT_EQ(crc32c(down.data(), 32), 0x113FDB5Cu);
  const uint8_t readCommand[48] = {
      0x01, 0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
      0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(crc32c(readCommand, 48), 0xD9963A56u);
}

// Every length and start alignment, so that both the eight-byte steps and
// the byte-wise tail are compared with the definition.
TEST(Crc32c, MatchesTheBitwiseDefinition) {
  std::mt19937 rng(7);
  std::vector<uint8_t> bytes(300);
  for (uint8_t &b : bytes)
    b = (uint8_t)rng();
  for (size_t start = 0; start < 8; ++start)
    for (size_t n = 0; start + n <= 200; ++n)
      ASSERT_EQ(crc32c(bytes.data() + start, n), bitwiseCrc32c(bytes.data() + start, n))
          << "start " << start << ", " << n << " bytes";
}

TEST(Crc32c, ContinuesFromAPreviousValue) {
  const char *text = "The quick brown fox jumps over the lazy dog";
  size_t n = std::strlen(text);
  uint32_t whole = crc32c(text, n);
  EXPECT_EQ(whole, bitwiseCrc32c((const uint8_t *)text, n));
  for (size_t cut = 0; cut <= n; ++cut)
    EXPECT_EQ(crc32c(text + cut, n - cut, crc32c(text, cut)), whole) << "cut at " << cut;
}

TEST(Crc32c, EverySingleBitFlipChangesIt) {
  std::vector<uint8_t> bytes(64);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = (uint8_t)(i * 37 + 11);
  uint32_t clean = crc32c(bytes.data(), bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      bytes[i] ^= (uint8_t)(1 << bit);
      EXPECT_NE(crc32c(bytes.data(), bytes.size()), clean) << "byte " << i << ", bit " << bit;
      bytes[i] ^= (uint8_t)(1 << bit);
    }
}
