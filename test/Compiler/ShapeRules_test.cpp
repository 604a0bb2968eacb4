//===- ShapeRulesTest.cpp - Shape rules with symbolic dimensions ----------===//

#include "dialects/Graph/IR/ShapeRules.h"

#include <gtest/gtest.h>

using namespace sinter::shape;

namespace {

Dim K(int64_t v) { return Dim::known(v); }
Dim S(const char *s) { return Dim::symbol(s); }

TEST(ShapeRules, BroadcastAlignsTrailingDimensions) {
  Result r = broadcast({S("B"), K(1), K(64)}, {K(32), K(1)});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(str(r.shape), "[B, 32, 64]");
}

TEST(ShapeRules, BroadcastRejectsDifferentSymbols) {
  Result r = broadcast({S("B"), S("T")}, {S("T"), S("B")});
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.error.find("[B, T] and [T, B]"), std::string::npos);
}

TEST(ShapeRules, UnknownDimensionsAreCompatible) {
  Result r = broadcast({Dim::unknown(), K(4)}, {K(3), K(4)});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(str(r.shape), "[3, 4]");
}

TEST(ShapeRules, MatmulBroadcastsBatch) {
  Result r = matmul({S("B"), S("T"), K(768)}, {K(768), K(50257)});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(str(r.shape), "[B, T, 50257]");
  EXPECT_FALSE(matmul({K(2), K(3)}, {K(4), K(5)}).ok());
}

TEST(ShapeRules, ReshapeInfersSymbolicDimension) {
  Result r = reshape({S("B"), S("T"), K(64)}, {K(-1), K(64)});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(str(r.shape), "[B*T, 64]");
  EXPECT_FALSE(reshape({K(6)}, {K(4), K(-1)}).ok());
  EXPECT_FALSE(reshape({K(6)}, {K(-1), K(-1)}).ok());
}

TEST(ShapeRules, ReduceAndKeepdim) {
  EXPECT_EQ(str(reduce({S("B"), K(3), K(4)}, {-1}, true).shape), "[B, 3, 1]");
  EXPECT_EQ(str(reduce({S("B"), K(3), K(4)}, {}, false).shape), "[]");
  EXPECT_FALSE(reduce({K(3)}, {1}, false).ok());
  EXPECT_FALSE(reduce({K(3), K(4)}, {0, -2}, false).ok());
}

TEST(ShapeRules, Conv2dAndPooling) {
  int64_t one[2] = {1, 1}, two[2] = {2, 2}, zero[2] = {0, 0};
  Result r = conv2d({S("B"), K(3), K(32), K(32)}, {K(64), K(3), K(3), K(3)},
                    two, one, one, 1);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(str(r.shape), "[B, 64, 16, 16]");
  EXPECT_FALSE(conv2d({K(1), K(4), K(8), K(8)}, {K(8), K(3), K(3), K(3)}, one,
                      one, one, 1)
                   .ok());
  Result p = pool2d({K(1), K(8), K(9), K(9)}, two, two, zero);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(str(p.shape), "[1, 8, 4, 4]");
}

TEST(ShapeRules, ConcatAddsLikeTerms) {
  Result r = concat({{S("B"), K(3)}, {S("B"), K(5)}}, 1);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(str(r.shape), "[B, 8]");
  Result s = concat({{S("B"), K(3)}, {S("B"), K(3)}}, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(str(s.shape), "[2*B, 3]");
  EXPECT_FALSE(concat({{S("B")}, {K(2)}}, 0).ok());
}

TEST(ShapeRules, SliceBounds) {
  EXPECT_EQ(str(slice({K(4), K(10)}, 1, 2, -1).shape), "[4, 7]");
  EXPECT_FALSE(slice({K(4), K(10)}, 1, 2, 11).ok());
}

TEST(ShapeRules, ClassTargets) {
  EXPECT_TRUE(classTargets({S("B"), S("T"), K(10)}, {S("B"), S("T")}).ok());
  EXPECT_FALSE(classTargets({S("B"), K(10)}, {S("B"), K(10)}).ok());
}

TEST(ShapeRules, DimArithmeticOverflowIsReported) {
  Dim big = K(int64_t(1) << 62);
  EXPECT_FALSE(big.mul(K(4)).has_value());
  EXPECT_FALSE(numElements({big, K(8)}).has_value());
}

} // namespace
