//===- Philox_test.cpp - Philox-4x32-10 and the name hash -----------------===//

#include "core/Philox.h"

#include <gtest/gtest.h>

using namespace sinter::rt;

// Random123's tests/kat_vectors, the three "philox4x32 10" lines.
TEST(Philox, KnownAnswers) {
  EXPECT_EQ(philox4x32x10({0, 0, 0, 0}, {0, 0}),
            (PhiloxCounter{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32x10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                          {0xffffffff, 0xffffffff}),
            (PhiloxCounter{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32x10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                          {0xa4093822, 0x299f31d0}),
            (PhiloxCounter{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// Published FNV-1a 64 test values.
TEST(Philox, Fnv1a64) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(Philox, StreamLayout) {
  // Counter (i lo, i hi, id lo, id hi), key (seed lo, seed hi).
  PhiloxStream s{0x299f31d0a4093822ull, 0x0370734413198a2eull};
  std::array<uint64_t, 2> w = s.at(0x85a308d3243f6a88ull);
  EXPECT_EQ(w[0], 0x94fdcceb'd16cfe09ull);
  EXPECT_EQ(w[1], 0x24126ea1'5001e420ull);
}
