//===- CheckedSource_test.cpp - Integer inputs against their bounds -------===//

#include "program/CheckedSource.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace sinter::rt;

namespace {

NpyArray npy(const std::string &name, DType t, Shape shape, const void *data) {
  Expected<std::vector<uint8_t>> bytes = encodeNpy(t, shape, data);
  EXPECT_TRUE(bytes.ok()) << bytes.message();
  Expected<NpyArray> a = NpyArray::parse(FileBuffer::fromBytes(*bytes, name));
  EXPECT_TRUE(a.ok()) << a.message();
  return a.take();
}

BufferSpec input(const std::string &name, DType dtype, uint64_t bound,
                 std::string source = "", std::optional<int64_t> ignore = {}) {
  BufferSpec b;
  b.name = name;
  b.kind = BufferKind::Input;
  b.dtype = dtype;
  b.valueBound = bound;
  b.valueBoundSource = std::move(source);
  b.ignoreIndex = ignore;
  return b;
}

// Four samples: x (f32 [2]), y (i64 class targets), tok (i32 [3] token ids).
const float kX[] = {0, 1, 1e9f, -5, 2, 3, 4, 5};
const int64_t kY[] = {1, 2, 9, 0};
const int32_t kTok[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

std::unique_ptr<BatchSource> source(const int64_t *y = kY, const int32_t *tok = kTok) {
  Expected<std::unique_ptr<BatchSource>> src =
      makeNpyBatchSource({{"x", npy("data/x.npy", DType::F32, {4, 2}, kX)},
                          {"y", npy("data/y.npy", DType::I64, {4}, y)},
                          {"tok", npy("data/tok.npy", DType::I32, {4, 3}, tok)}});
  EXPECT_TRUE(src.ok()) << src.message();
  return src.take();
}

const std::map<std::string, std::string> kFiles = {
    {"x", "data/x.npy"}, {"y", "data/y.npy"}, {"tok", "data/tok.npy"}};

Status gather(const BatchSource &src, const std::vector<uint64_t> &ids) {
  std::vector<HostTensor> out;
  return src.gather(ids, out);
}

} // namespace

TEST(CheckedSource, NothingBoundedReturnsTheSourceUnchanged) {
  std::unique_ptr<BatchSource> src = source();
  BatchSource *raw = src.get();
  StepPlan plan;
  plan.buffers = {input("x", DType::F32, 0), input("y", DType::I64, 0)};
  // A bound on something other than an input is not a data check.
  BufferSpec param = input("y", DType::I64, 3);
  param.kind = BufferKind::Param;
  plan.buffers.push_back(param);
  std::unique_ptr<BatchSource> checked =
      checkValueBounds(std::move(src), plan, kFiles, "data.train");
  EXPECT_EQ(checked.get(), raw);
}

TEST(CheckedSource, PassesValuesInRangeAndForwardsTheSource) {
  StepPlan plan;
  plan.buffers = {input("y", DType::I64, 10), input("tok", DType::I32, 12)};
  std::unique_ptr<BatchSource> checked =
      checkValueBounds(source(), plan, kFiles, "data.train");
  EXPECT_EQ(checked->numSamples(), 4u);
  ASSERT_EQ(checked->inputs().size(), 3u);
  EXPECT_EQ(checked->inputs()[1].name, "y");
  std::vector<HostTensor> out;
  Status s = checked->gather({3, 0, 2}, out);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(out.size(), 3u);
  // The batch comes through as gathered.
  std::vector<int64_t> y(3);
  std::memcpy(y.data(), out[1].bytes.data(), 24);
  EXPECT_EQ(y, (std::vector<int64_t>{0, 1, 9}));
}

TEST(CheckedSource, RefusesAValuePastTheBound) {
  StepPlan plan;
  // 9 is the largest target: a bound of 9 leaves it out.
  plan.buffers = {input("y", DType::I64, 9, "cross_entropy at mlp.sn:7:10")};
  std::unique_ptr<BatchSource> checked =
      checkValueBounds(source(), plan, kFiles, "data.train");
  EXPECT_TRUE(gather(*checked, {0, 1, 3}).ok());
  EXPECT_EQ(gather(*checked, {3, 2, 0}).message(),
            "data.train: data/y.npy: input 'y', sample 2, element 0: the value 9 "
            "is outside [0, 9) that cross_entropy at mlp.sn:7:10 accepts");
}

TEST(CheckedSource, NamesTheSampleAndElementOfAMultiDimensionalInput) {
  int32_t tok[12];
  std::memcpy(tok, kTok, sizeof tok);
  tok[1 * 3 + 2] = -1; // sample 1, element 2
  StepPlan plan;
  plan.buffers = {input("tok", DType::I32, 50, "the embedding at gpt.sn:14:9")};
  std::unique_ptr<BatchSource> checked =
      checkValueBounds(source(kY, tok), plan, kFiles, "data.eval");
  // Sample 1 is the second row gathered: the message speaks of sample ids,
  // not of rows of the batch.
  EXPECT_EQ(gather(*checked, {2, 1}).message(),
            "data.eval: data/tok.npy: input 'tok', sample 1, element 2: the value -1 "
            "is outside [0, 50) that the embedding at gpt.sn:14:9 accepts");
}

TEST(CheckedSource, ReportsTheFirstBadValueInBatchOrder) {
  const int64_t y[] = {1, 70, 2, 40};
  StepPlan plan;
  plan.buffers = {input("y", DType::I64, 10, "nll")};
  std::unique_ptr<BatchSource> checked =
      checkValueBounds(source(y), plan, kFiles, "data.train");
  EXPECT_NE(gather(*checked, {3, 1}).message().find("sample 3, element 0: the value 40"),
            std::string::npos);
  EXPECT_NE(gather(*checked, {1, 3}).message().find("sample 1, element 0: the value 70"),
            std::string::npos);
}

TEST(CheckedSource, AllowsTheIgnoreIndexOnly) {
  const int64_t y[] = {1, -100, 2, -99};
  StepPlan plan;
  plan.buffers = {input("y", DType::I64, 10, "cross_entropy at lm.sn:3:1", -100)};
  std::unique_ptr<BatchSource> checked =
      checkValueBounds(source(y), plan, kFiles, "data.train");
  EXPECT_TRUE(gather(*checked, {0, 1, 2}).ok());
  EXPECT_EQ(gather(*checked, {1, 3}).message(),
            "data.train: data/y.npy: input 'y', sample 3, element 0: the value -99 "
            "is outside [0, 10) or the ignore_index -100 that cross_entropy at "
            "lm.sn:3:1 accepts");
}

TEST(CheckedSource, LeavesFloatInputsAlone) {
  // x holds 1e9 and -5, far outside this bound, but floats index nothing.
  StepPlan plan;
  plan.buffers = {input("x", DType::F32, 2, "somewhere")};
  std::unique_ptr<BatchSource> checked =
      checkValueBounds(source(), plan, kFiles, "data.train");
  Status s = gather(*checked, {0, 1, 2, 3});
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(CheckedSource, WithoutFileOrSourceSaysTheModel) {
  const int64_t y[] = {1, 2, 3, 12};
  StepPlan plan;
  plan.buffers = {input("y", DType::I64, 4)};
  std::unique_ptr<BatchSource> checked =
      checkValueBounds(source(y), plan, {}, "data.train");
  EXPECT_EQ(gather(*checked, {3}).message(),
            "data.train: input 'y', sample 3, element 0: the value 12 is outside "
            "[0, 4) that the model accepts");
}

TEST(CheckedSource, GatherErrorsPassThrough) {
  StepPlan plan;
  plan.buffers = {input("y", DType::I64, 10)};
  std::unique_ptr<BatchSource> checked =
      checkValueBounds(source(), plan, kFiles, "data.train");
  Status s = gather(*checked, {4});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("sample 4 is out of range"), std::string::npos) << s.message();
}
