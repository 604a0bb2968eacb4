//===- KernelTimes_test.cpp - A profiled run's table of device time ------===//

#include "device/KernelTimes.h"

#include <gtest/gtest.h>

namespace {

using sinter::rt::KernelTimes;

TEST(KernelTimes, SumsByLabelAndKindLongestFirstWithoutFirstCalls) {
  KernelTimes t;
  // First calls (plans made): left out, however long.
  t.add("kernel", "gpt_k3 (gpt.sn:30:5)", 100.0);
  t.add("matmul", "matmul bf16 [8 x 4] @ [4 x 2] (op at gpt.sn:12:9)", 900.0);
  t.add("kernel", "gpt_k7 (gpt.sn:41:3)", 100.0);
  t.add("kernel", "gpt_k3 (gpt.sn:30:5)", 1.0);
  t.add("matmul", "matmul bf16 [8 x 4] @ [4 x 2] (op at gpt.sn:12:9)", 5.0);
  t.add("kernel", "gpt_k3 (gpt.sn:30:5)", 1.5);
  t.add("kernel", "gpt_k7 (gpt.sn:41:3)", 2.5);
  EXPECT_EQ(t.calls(), 4);
  EXPECT_EQ(t.table(5), "GPU time: 10.000 ms in 4 kernels and library calls (each one's "
                        "first left out) (kernel 50.0%, matmul 50.0%)\n"
                        "   50.0%      5.000 ms       1 x  matmul bf16 [8 x 4] @ [4 x 2] "
                        "(op at gpt.sn:12:9)\n"
                        "   25.0%      2.500 ms       2 x  gpt_k3 (gpt.sn:30:5)\n"
                        "   25.0%      2.500 ms       1 x  gpt_k7 (gpt.sn:41:3)");
}

TEST(KernelTimes, TheRestIsOneLine) {
  KernelTimes t;
  for (const char *label : {"a", "b", "c"})
    t.add("kernel", label, 1000.0);
  t.add("kernel", "a", 6.0);
  t.add("kernel", "b", 3.0);
  t.add("kernel", "c", 1.0);
  EXPECT_EQ(t.table(1), "GPU time: 10.000 ms in 3 kernels and library calls (each one's "
                        "first left out) (kernel 100.0%)\n"
                        "   60.0%      6.000 ms       1 x  a\n"
                        "   40.0%      4.000 ms in 2 others");
}

TEST(KernelTimes, NothingTimed) {
  KernelTimes t;
  t.add("kernel", "once", 5.0);
  EXPECT_EQ(t.calls(), 0);
  EXPECT_EQ(t.table(3), "GPU time: 0.000 ms in 0 kernels and library calls (each one's "
                        "first left out)");
}

} // namespace
