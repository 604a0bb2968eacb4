//===- Status_test.cpp - Status and Expected ------------------------------===//

#include "sinter/rt/Status.h"

#include <gtest/gtest.h>

#include <memory>

using namespace sinter::rt;

namespace {

Status failsWhen(bool fail) { return fail ? Status::error("it failed") : Status::success(); }

Status propagates(bool fail) {
  SINTER_RT_RETURN_IF_ERROR(failsWhen(fail));
  return Status::error("reached the end");
}

Expected<std::unique_ptr<int>> makeInt(bool fail) {
  if (fail)
    return Status::error("no int");
  return std::make_unique<int>(7);
}

} // namespace

TEST(Status, SuccessAndError) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.message(), "");
  Status bad = Status::error("x.npy: truncated");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "x.npy: truncated");
  EXPECT_FALSE(Status::error("").ok()) << "an empty message is still an error";
}

TEST(Status, PrefixAndMacro) {
  EXPECT_EQ(Status::error("b").withPrefix("a: ").message(), "a: b");
  EXPECT_TRUE(Status::success().withPrefix("a: ").ok());
  EXPECT_EQ(propagates(true).message(), "it failed");
  EXPECT_EQ(propagates(false).message(), "reached the end");
}

TEST(Expected, ValueOrError) {
  Expected<std::unique_ptr<int>> good = makeInt(false);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(**good, 7);
  std::unique_ptr<int> taken = good.take();
  EXPECT_EQ(*taken, 7);
  Expected<std::unique_ptr<int>> bad = makeInt(true);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "no int");
}
