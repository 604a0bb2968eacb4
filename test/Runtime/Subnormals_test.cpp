//===- Subnormals_test.cpp - Subnormal floats read and written as zero ---===//
//
// The thread that sets the mode and the threads it starts later. A step's
// parallel regions and oneDNN's workers are checked through a program, in
// test/E2E/subnormals.test: this binary's OpenMP pool (libgomp's, started by
// earlier tests) does not take a mode set after it.
//
//===----------------------------------------------------------------------===//

#include "main/Subnormals.h"

#include <gtest/gtest.h>

#include <thread>

namespace {

/// Whether the calling thread reads a subnormal as zero and flushes a
/// subnormal product.
bool readsAsZero() {
  volatile float subnormal = 1e-39f;
  volatile float read = subnormal * 1.0f;
  return read == 0.0f;
}
bool flushesResults() {
  volatile float small = 1e-30f;
  volatile float product = small * 1e-9f;
  return product == 0.0f;
}

/// `body` on a thread of its own, so the test binary's thread keeps its mode.
template <typename F> void onItsOwnThread(F body) { std::thread(body).join(); }

} // namespace

#if defined(__x86_64__)
TEST(Subnormals, FlushedOnTheThreadAndTheThreadsItStarts) {
  onItsOwnThread([] {
    EXPECT_FALSE(readsAsZero());
    EXPECT_FALSE(flushesResults());
    sinter::rt::flushSubnormals();
    EXPECT_TRUE(readsAsZero());
    EXPECT_TRUE(flushesResults());
    onItsOwnThread([] {
      EXPECT_TRUE(readsAsZero());
      EXPECT_TRUE(flushesResults());
    });
  });
  // A thread that did not set it keeps them.
  onItsOwnThread([] { EXPECT_FALSE(readsAsZero()); });
}
#endif
