//===- Init_test.cpp - Parameter initialisers -----------------------------===//
//
// Agreement with the numpy reference (init_reference.py) is tested two ways:
// here against values it produced, embedded below (first elements of each
// case; regenerate with `init_reference.py --emit-cpp`), and, where numpy
// is installed, by the ctest `runtime-init-reference`, which compares every
// element of every case through the sinter-init-dump tool.

#include "InitLine.h"

#include "core/Init.h"
#include "data/Sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace sinter::rt;

namespace {

struct ReferenceCase {
  const char *line;
  std::vector<std::string> expected;
};

const ReferenceCase kReference[] = {
    {"h.3.attn.c_attn.weight normal f32 8x24 0 0 192 0.0 0.02",
     {"bcc18f4b", "bba1fc51", "bd038535", "3c010961", "3cac1c60", "3d0e7eb0"}},
    {"h.3.attn.c_attn.weight normal f64 8x24 0 0 192 0.0 0.02",
     {"bf9831e96232ef5f", "bf743f8a258c444c", "bfa070a6a07f44aa", "3f80212c24530835", "3f95838c010d624f", "3fa1cfd5f93eb07f"}},
    {"h.3.attn.c_attn.weight normal f64 8x24 0 37 50 0.0 0.02",
     {"bf97fa3bff0f4ecd", "bfa8823e5e21340c", "bf94acbf350d740d", "3fa1439eff40adff", "bf66ad47266c0133", "3fa22e4f9ed060ba"}},
    {"wte.weight normal f64 1000 1234567 0 1000 0.5 2.0",
     {"3fe508a9c3094440", "3ff676c4c64b8619", "bfc913746dcfa440", "c00302b479186d13", "c0009842a53ea7ea", "bfb4cbf9669e2e60"}},
    {"fc1.weight kaiming_uniform f32 64x784 0 1000 300 784.0 2.23606797749979",
     {"3ccc02d0", "bcc5e89b", "bcbed9c6", "bd05830a", "bcbaeb14", "bb1ec66d"}},
    {"fc1.weight kaiming_uniform f64 64x784 0 0 400 784.0 2.23606797749979",
     {"3f95cdea8a029732", "bf9a1e4025208374", "3f995710ce6d02c2", "3fa0b39b8dee06a0", "bfa072eb1e19387d", "3f9d7201ffd2c87c"}},
    {"fc1.bias uniform f32 64 7 0 64 -0.0357 0.0357",
     {"3beb6eb8", "bce75852", "3ccbb0dc", "bbbe32ec", "3c2b4164", "3bce119a"}},
    {"layer1.0.conv1.weight kaiming_normal f32 64x64x3x3 42 0 512 576.0 1.4142135623730951",
     {"bdfe5ec3", "3d3c58c4", "3c275ecf", "3cec8f6f", "bc92f8f1", "bb3c6bc5"}},
    {"proj.weight xavier_uniform f64 256x128 18446744073709551615 5 333 128.0 256.0",
     {"3fad29a76049c93c", "bfa71690c5e9aaa8", "bf9131db24c98648", "bfa07418744df1b4", "3fa62ecae5f6ea34", "3f93429462e076e0"}},
    {"vit.pos_embed trunc_normal f32 197x768 0 0 600 0.0 0.02 -0.04 0.04",
     {"bc58eaef", "bba5648c", "3c4be971", "bc647918", "bd123bcd", "bc95fed0"}},
    {"vit.pos_embed trunc_normal f64 1000 3 0 1000 0.0 1.0 -2.0 2.0",
     {"bfb72b3f3d76ef09", "3fce6872a9a30311", "bfe03e50ef4299f8", "bff206a878163769", "3fea80f1f4e48379", "bfe3758b1f39dd74"}},
    {"tail trunc_normal f64 500 9 0 500 0.0 1.0 3.0 10.0",
     {"400c50c82ccff7c6", "40092e7818fd12e3", "40088f8662ee3a8d", "4008c924f1549eb1", "4008042e4ace81cd", "400945624c6dd991"}},
    {"tail.neg trunc_normal f64 500 9 0 500 1.0 2.0 -inf -5.0",
     {"c015a8b1e1e4eecd", "c017e7a139c5798a", "c01c233b20156c7e", "c014bcf318c3dfd4", "c0142fe62bf1e120", "c01af92d0b5b57b1"}},
    {"one.side trunc_normal f32 500 9 0 500 0.0 1.0 -1.0 inf",
     {"be638cfe", "bcd2ad67", "be5a660d", "bf235151", "bf12a393", "bf755fe5"}},
    {"u.narrow uniform f32 2000 5 0 2000 1.0 1.0000001",
     {"3f800000", "3f800000", "3f800000", "3f800000", "3f800000", "3f800000"}},
    {"caf\xc3\xa9.\xce\xb2 normal f64 64 11 0 64 0.0 1.0",
     {"bfeb4b2ad5a5b193", "3ff50824d56a2699", "3fe180335e2c1f89", "bfe1dd3ece82dd04", "3fd0128d6dd61f01", "3fff5cd266106f6b"}},
    {"ln.weight ones f32 16 0 0 16 ",
     {"3f800000", "3f800000", "3f800000", "3f800000", "3f800000", "3f800000"}},
    {"bn.num_batches_tracked zeros i64 - 0 0 1 ",
     {"0000000000000000"}},
    {"scale constant f64 3 0 0 3 0.1",
     {"3fb999999999999a", "3fb999999999999a", "3fb999999999999a"}},
    {"scale32 constant f32 3 0 0 3 0.1",
     {"3dcccccd", "3dcccccd", "3dcccccd"}},
    {"perm 10 0 0",
     {"0", "5", "9", "4", "2", "7", "1", "6", "3", "8"}},
    {"perm 1000 5 3",
     {"524", "536", "579", "819", "219", "752", "386", "52", "241", "703", "263", "515"}},
    {"perm 37 18446744073709551615 12345",
     {"28", "11", "35", "29", "27", "4", "8", "21", "22", "15", "33", "7"}},
};

std::vector<float> fillF32(const std::string &name, InitKind k, std::vector<double> args,
                           Shape shape, uint64_t seed = 0) {
  uint64_t n = 1;
  for (uint64_t d : shape)
    n *= d;
  std::vector<float> v(n);
  Status s = fill(name, k, args, DType::F32, shape, seed, 0, n, v.data());
  EXPECT_TRUE(s.ok()) << s.message();
  return v;
}

std::vector<double> fillF64(const std::string &name, InitKind k, std::vector<double> args,
                            uint64_t n, uint64_t seed = 0) {
  std::vector<double> v(n);
  Status s = fill(name, k, args, DType::F64, {n}, seed, 0, n, v.data());
  EXPECT_TRUE(s.ok()) << s.message();
  return v;
}

template <typename T> void meanStd(const std::vector<T> &v, double &mean, double &sd) {
  double s = 0, s2 = 0;
  for (T x : v) {
    s += x;
    s2 += (double)x * x;
  }
  mean = s / v.size();
  sd = std::sqrt(s2 / v.size() - mean * mean);
}

} // namespace

TEST(Init, MatchesTheNumpyReference) {
  for (const ReferenceCase &c : kReference) {
    std::string error;
    std::vector<std::string> got = test::answerInitLine(c.line, c.expected.size(), error);
    EXPECT_EQ(error, "") << c.line;
    EXPECT_EQ(got, c.expected) << c.line;
  }
}

TEST(Init, Deterministic) {
  EXPECT_EQ(fillF32("w", InitKind::Normal, {0, 1}, {100}),
            fillF32("w", InitKind::Normal, {0, 1}, {100}));
  EXPECT_NE(fillF32("w", InitKind::Normal, {0, 1}, {100}, 0),
            fillF32("w", InitKind::Normal, {0, 1}, {100}, 1))
      << "the seed matters";
  EXPECT_NE(fillF32("h.0.w", InitKind::Normal, {0, 1}, {100}),
            fillF32("h.1.w", InitKind::Normal, {0, 1}, {100}))
      << "the name matters";
}

TEST(Init, IndependentOfOrderAndShapeOfOthers) {
  // Filling b before a gives the same a: no hidden state.
  std::vector<float> a1 = fillF32("a", InitKind::Uniform, {-1, 1}, {50});
  fillF32("b", InitKind::Normal, {0, 1}, {1000});
  std::vector<float> a2 = fillF32("a", InitKind::Uniform, {-1, 1}, {50});
  EXPECT_EQ(a1, a2);
  // Element i depends on the flat index only, so [10, 5] and [50] agree.
  EXPECT_EQ(fillF32("a", InitKind::Uniform, {-1, 1}, {10, 5}), a1);
}

TEST(Init, SlicesEqualTheWhole) {
  for (InitKind k : {InitKind::Normal, InitKind::Uniform, InitKind::TruncNormal,
                     InitKind::KaimingUniform}) {
    std::vector<double> args = k == InitKind::TruncNormal ? std::vector<double>{0, 1, -2, 2}
                               : k == InitKind::KaimingUniform ? std::vector<double>{64}
                                                               : std::vector<double>{0, 1};
    const uint64_t n = 1000;
    std::vector<double> whole(n), pieces(n);
    ASSERT_TRUE(fill("p", k, args, DType::F64, {10, 100}, 3, 0, n, whole.data()).ok());
    // Uneven shards, filled in reverse order.
    uint64_t cuts[] = {0, 1, 333, 334, 999, 1000};
    for (int i = 4; i >= 0; --i)
      ASSERT_TRUE(fill("p", k, args, DType::F64, {10, 100}, 3, cuts[i], cuts[i + 1] - cuts[i],
                       pieces.data() + cuts[i])
                      .ok());
    EXPECT_EQ(std::memcmp(whole.data(), pieces.data(), n * sizeof(double)), 0) << initKindName(k);
  }
}

TEST(Init, ThreadsGiveTheValuesOfOne) {
  // Five chunks of the parallel fill, a slice starting inside one.
  const uint64_t n = 5 * (uint64_t(1) << 16) + 123, first = 70001;
  const char *was = std::getenv("OMP_NUM_THREADS");
  std::string saved = was ? was : "";
  auto filled = [&](const char *threads, InitKind k, std::vector<double> args) {
    ::setenv("OMP_NUM_THREADS", threads, 1);
    std::vector<float> v(n - first);
    EXPECT_TRUE(fill("h.0.attn.c_attn.weight", k, args, DType::F32, {n}, 11, first, n - first,
                     v.data())
                    .ok());
    return v;
  };
  for (auto [k, args] : {std::pair{InitKind::Normal, std::vector<double>{0, 0.02}},
                         std::pair{InitKind::Uniform, std::vector<double>{-1, 1}}}) {
    std::vector<float> one = filled("1", k, args), many = filled("8", k, args);
    EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0);
  }
  if (was)
    ::setenv("OMP_NUM_THREADS", saved.c_str(), 1);
  else
    ::unsetenv("OMP_NUM_THREADS");
}

TEST(Init, NormalStatistics) {
  const uint64_t n = 1'000'000;
  double mean, sd;
  meanStd(fillF64("n", InitKind::Normal, {0.5, 2}, n), mean, sd);
  // Standard errors: 2/1000 for the mean, about 2/1414 for the std.
  EXPECT_NEAR(mean, 0.5, 0.01);
  EXPECT_NEAR(sd, 2.0, 0.01);
  std::vector<double> z = fillF64("z", InitKind::Normal, {0, 1}, n);
  uint64_t within1 = std::count_if(z.begin(), z.end(), [](double x) { return std::fabs(x) < 1; });
  EXPECT_NEAR(within1 / (double)n, 0.6826894921, 0.003);
  meanStd(fillF64("k", InitKind::KaimingNormal, {256, std::sqrt(2.0)}, n), mean, sd);
  EXPECT_NEAR(mean, 0, 0.001);
  EXPECT_NEAR(sd, std::sqrt(2.0) / 16, 0.001);
}

TEST(Init, UniformStatisticsAndBounds) {
  const uint64_t n = 1'000'000;
  std::vector<double> u = fillF64("u", InitKind::Uniform, {-3, 5}, n);
  double mean, sd;
  meanStd(u, mean, sd);
  EXPECT_NEAR(mean, 1, 0.01);
  EXPECT_NEAR(sd, 8 / std::sqrt(12.0), 0.01);
  EXPECT_GE(*std::min_element(u.begin(), u.end()), -3);
  EXPECT_LT(*std::max_element(u.begin(), u.end()), 5);
  // A range so narrow in f32 that rounding would reach hi: still below it.
  std::vector<float> narrow = fillF32("n", InitKind::Uniform, {1.0, 1.0000001}, {100000});
  for (float f : narrow) {
    ASSERT_GE(f, 1.0f);
    ASSERT_LT(f, (float)1.0000001);
  }
}

TEST(Init, KaimingAndXavierBounds) {
  // nn.Linear(784, 64): kaiming_uniform(784, a=sqrt(5)) gives 1/sqrt(784).
  std::vector<float> w = fillF32("fc1.weight", InitKind::KaimingUniform, {784, std::sqrt(5.0)}, {64, 784});
  float bound = (float)(1 / 28.0);
  float lo = *std::min_element(w.begin(), w.end()), hi = *std::max_element(w.begin(), w.end());
  EXPECT_GE(lo, -bound);
  EXPECT_LT(hi, bound);
  EXPECT_LT(lo, -0.99f * bound) << "the range is used";
  EXPECT_GT(hi, 0.99f * bound);
  std::vector<float> k = fillF32("c", InitKind::KaimingUniform, {27}, {100000});
  float kb = (float)std::sqrt(6.0 / 27);
  EXPECT_GE(*std::min_element(k.begin(), k.end()), -kb);
  EXPECT_LT(*std::max_element(k.begin(), k.end()), kb);
  EXPECT_GT(*std::max_element(k.begin(), k.end()), 0.999f * kb);
  std::vector<float> x = fillF32("x", InitKind::XavierUniform, {100, 50}, {50, 100});
  float xb = (float)std::sqrt(6.0 / 150);
  EXPECT_GE(*std::min_element(x.begin(), x.end()), -xb);
  EXPECT_LT(*std::max_element(x.begin(), x.end()), xb);
}

TEST(Init, TruncNormalStatistics) {
  const uint64_t n = 1'000'000;
  std::vector<double> t = fillF64("t", InitKind::TruncNormal, {0, 1, -2, 2}, n);
  double mean, sd;
  meanStd(t, mean, sd);
  EXPECT_NEAR(mean, 0, 0.003);
  EXPECT_NEAR(sd, 0.8796256610, 0.003); // the std of N(0,1) truncated to [-2, 2]
  EXPECT_GE(*std::min_element(t.begin(), t.end()), -2);
  EXPECT_LE(*std::max_element(t.begin(), t.end()), 2);
  // a and b are absolute: mean 1, std 2, cut at [0, 1] keeps values in [0, 1].
  std::vector<double> abs = fillF64("abs", InitKind::TruncNormal, {1, 2, 0, 1}, 100000);
  EXPECT_GE(*std::min_element(abs.begin(), abs.end()), 0);
  EXPECT_LE(*std::max_element(abs.begin(), abs.end()), 1);
  // A far tail, [3, 10] sigma: mean of the truncated law is about 3.283.
  meanStd(fillF64("tail", InitKind::TruncNormal, {0, 1, 3, 10}, n), mean, sd);
  EXPECT_NEAR(mean, 3.28309, 0.005);
  // ViT's trunc_normal(0, 0.02, -0.04, 0.04) in f32.
  std::vector<float> v = fillF32("pos", InitKind::TruncNormal, {0, 0.02, -0.04, 0.04}, {197, 768});
  EXPECT_GE(*std::min_element(v.begin(), v.end()), -0.04f);
  EXPECT_LE(*std::max_element(v.begin(), v.end()), 0.04f);
}

TEST(Init, ConstantsInEveryDType) {
  uint8_t buf[64];
  ASSERT_TRUE(fill("s", InitKind::Ones, {}, DType::F16, {3}, 0, 0, 3, buf).ok());
  EXPECT_EQ(buf[0] | buf[1] << 8, 0x3c00);
  ASSERT_TRUE(fill("s", InitKind::Constant, {-2}, DType::BF16, {3}, 0, 0, 3, buf).ok());
  EXPECT_EQ(buf[4] | buf[5] << 8, 0xc000);
  ASSERT_TRUE(fill("s", InitKind::Constant, {7}, DType::I64, {2}, 0, 0, 2, buf).ok());
  int64_t i64;
  std::memcpy(&i64, buf + 8, 8);
  EXPECT_EQ(i64, 7);
  ASSERT_TRUE(fill("s", InitKind::Constant, {-5}, DType::I32, {1}, 0, 0, 1, buf).ok());
  int32_t i32;
  std::memcpy(&i32, buf, 4);
  EXPECT_EQ(i32, -5);
  ASSERT_TRUE(fill("s", InitKind::Ones, {}, DType::Bool, {4}, 0, 0, 4, buf).ok());
  EXPECT_EQ(buf[3], 1);
  ASSERT_TRUE(fill("s", InitKind::Zeros, {}, DType::F64, {}, 0, 0, 1, buf).ok());
  double d;
  std::memcpy(&d, buf, 8);
  EXPECT_EQ(d, 0.0);
}

TEST(Init, Errors) {
  float f[4];
  auto err = [&](InitKind k, std::vector<double> args, DType t = DType::F32,
                 uint64_t first = 0, uint64_t count = 4) {
    return fill("h.0.mlp.c_fc.weight", k, args, t, {2, 2}, 0, first, count, f).message();
  };
  EXPECT_EQ(err(InitKind::Normal, {0}),
            "h.0.mlp.c_fc.weight: normal(mean, std) takes 2 arguments, got 1");
  EXPECT_EQ(err(InitKind::KaimingUniform, {}),
            "h.0.mlp.c_fc.weight: kaiming_uniform(fan_in, a=0) takes 1 or 2 arguments, got 0");
  EXPECT_EQ(err(InitKind::Constant, {1, 2}),
            "h.0.mlp.c_fc.weight: constant(v) takes 1 argument, got 2");
  EXPECT_EQ(err(InitKind::Normal, {0, -1}),
            "h.0.mlp.c_fc.weight: normal(mean, std): std is -1; expected std >= 0");
  EXPECT_EQ(err(InitKind::Normal, {NAN, 1}),
            "h.0.mlp.c_fc.weight: normal(mean, std): argument 1 is nan; expected a finite number");
  EXPECT_EQ(err(InitKind::Uniform, {1, 1}),
            "h.0.mlp.c_fc.weight: uniform(lo, hi): lo = 1 and hi = 1; expected lo < hi");
  EXPECT_EQ(err(InitKind::TruncNormal, {0, 1, 2, -2}),
            "h.0.mlp.c_fc.weight: trunc_normal(mean, std, a, b): a = 2 and b = -2; expected a < b (absolute cut-offs, as in PyTorch's trunc_normal_)");
  EXPECT_EQ(err(InitKind::TruncNormal, {0, 0, -2, 2}),
            "h.0.mlp.c_fc.weight: trunc_normal(mean, std, a, b): std is 0; expected std > 0");
  EXPECT_EQ(err(InitKind::KaimingUniform, {0}),
            "h.0.mlp.c_fc.weight: kaiming_uniform(fan_in, a=0): fan_in is 0; expected fan_in > 0");
  EXPECT_EQ(err(InitKind::XavierUniform, {3, -1}),
            "h.0.mlp.c_fc.weight: xavier_uniform(fan_in, fan_out): fan_in = 3 and fan_out = -1; expected both > 0");
  EXPECT_EQ(err(InitKind::Normal, {0, 1}, DType::BF16),
            "h.0.mlp.c_fc.weight: normal fills f32 or f64 tensors, not bf16; random initialisers are for parameters (use zeros, ones or constant for a bf16 state)");
  EXPECT_EQ(err(InitKind::Constant, {1.5}, DType::I32),
            "h.0.mlp.c_fc.weight: constant: the value 1.5 is not a whole number in the range of i32");
  EXPECT_EQ(err(InitKind::Constant, {2}, DType::Bool),
            "h.0.mlp.c_fc.weight: constant: the value 2 is not a bool; expected 0 or 1");
  EXPECT_EQ(err(InitKind::Normal, {0, 1}, DType::F32, 2, 3),
            "h.0.mlp.c_fc.weight: elements [2, 5) are outside the tensor [2, 2] of 4 elements");
  EXPECT_EQ(err(InitKind::Normal, {0, 1}, DType::F32, UINT64_MAX, 3),
            "h.0.mlp.c_fc.weight: elements [18446744073709551615, 2^64 or more) are outside the tensor [2, 2] of 4 elements");
}

TEST(Init, KindNames) {
  for (InitKind k : {InitKind::Zeros, InitKind::Ones, InitKind::Constant, InitKind::Normal,
                     InitKind::Uniform, InitKind::TruncNormal, InitKind::KaimingUniform,
                     InitKind::KaimingNormal, InitKind::XavierUniform})
    EXPECT_EQ(parseInitKind(initKindName(k)), k);
  EXPECT_EQ(parseInitKind("gaussian"), std::nullopt);
}
