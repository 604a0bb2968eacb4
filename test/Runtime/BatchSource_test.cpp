//===- BatchSource_test.cpp - Gathering rows and token windows ------------===//

#include "data/BatchSource.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace sinter::rt;
using namespace sinter::rt::test;

namespace {

NpyArray npy(const std::string &name, DType t, Shape shape, const void *data) {
  Expected<std::vector<uint8_t>> bytes = encodeNpy(t, shape, data);
  Expected<NpyArray> a = NpyArray::parse(FileBuffer::fromBytes(*bytes, name));
  EXPECT_TRUE(a.ok()) << a.message();
  return a.take();
}

} // namespace

TEST(BatchSource, GathersNpyRows) {
  std::vector<float> x(5 * 3);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (float)i;
  std::vector<int64_t> y = {10, 11, 12, 13, 14};
  Expected<std::unique_ptr<BatchSource>> src = makeNpyBatchSource(
      {{"x", npy("x.npy", DType::F32, {5, 3}, x.data())}, {"y", npy("y.npy", DType::I64, {5}, y.data())}});
  ASSERT_TRUE(src.ok()) << src.message();
  EXPECT_EQ((*src)->numSamples(), 5u);
  ASSERT_EQ((*src)->inputs().size(), 2u);
  EXPECT_EQ((*src)->inputs()[0].sampleShape, Shape{3});
  EXPECT_EQ((*src)->inputs()[1].sampleShape, Shape{});

  std::vector<HostTensor> out;
  ASSERT_TRUE((*src)->gather({4, 0, 4}, out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "x");
  EXPECT_EQ(out[0].shape, (Shape{3, 3}));
  std::vector<float> rows(9);
  std::memcpy(rows.data(), out[0].bytes.data(), 36);
  EXPECT_EQ(rows, (std::vector<float>{12, 13, 14, 0, 1, 2, 12, 13, 14}));
  std::vector<int64_t> labels(3);
  std::memcpy(labels.data(), out[1].bytes.data(), 24);
  EXPECT_EQ(labels, (std::vector<int64_t>{14, 10, 14}));
  EXPECT_EQ((*src)->gather({5}, out).message(), "x.npy: sample 5 is out of range; the array has 5 rows");
}

TEST(BatchSource, NpyErrors) {
  float x[6] = {};
  EXPECT_EQ(makeNpyBatchSource({{"x", npy("data/x.npy", DType::F32, {3, 2}, x)},
                                {"y", npy("data/y.npy", DType::F32, {2}, x)}})
                .message(),
            "data/y.npy has 2 rows but data/x.npy has 3; every npy input must have the same first dimension (one row per sample)");
  EXPECT_EQ(makeNpyBatchSource({{"s", npy("s.npy", DType::F32, {}, x)}}).message(),
            "s.npy: the array is a scalar (shape []); input 's' needs a first dimension that indexes samples");
  EXPECT_EQ(makeNpyBatchSource({{"x", npy("a.npy", DType::F32, {3}, x)}, {"x", npy("b.npy", DType::F32, {3}, x)}})
                .message(),
            "npy data: input 'x' is given twice (a.npy and b.npy)");
  EXPECT_EQ(makeNpyBatchSource({}).message(),
            "npy data: no arrays; expected at least one npy { input: ... path: ... }");
}

TEST(BatchSource, GathersTokenWindows) {
  std::vector<uint16_t> ids(21);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = (uint16_t)(100 + i);
  Expected<TokenFile> tf = TokenFile::parse(FileBuffer::fromBytes(asBytes(ids), "t.bin"));
  ASSERT_TRUE(tf.ok());
  Expected<std::unique_ptr<BatchSource>> src = makeTokenBatchSource(tf.take(), 4);
  ASSERT_TRUE(src.ok()) << src.message();
  EXPECT_EQ((*src)->numSamples(), 5u);
  std::vector<HostTensor> out;
  ASSERT_TRUE((*src)->gather({2, 4}, out).ok());
  EXPECT_EQ(out[0].name, "idx");
  EXPECT_EQ(out[1].name, "targets");
  EXPECT_EQ(out[0].shape, (Shape{2, 4}));
  std::vector<int64_t> idx(8), tgt(8);
  std::memcpy(idx.data(), out[0].bytes.data(), 64);
  std::memcpy(tgt.data(), out[1].bytes.data(), 64);
  EXPECT_EQ(idx, (std::vector<int64_t>{108, 109, 110, 111, 116, 117, 118, 119}));
  EXPECT_EQ(tgt, (std::vector<int64_t>{109, 110, 111, 112, 117, 118, 119, 120}));

  Expected<TokenFile> small = TokenFile::parse(FileBuffer::fromBytes(asBytes(ids), "t.bin"));
  EXPECT_EQ(makeTokenBatchSource(small.take(), 64).message(),
            "t.bin: the file's 21 tokens are fewer than one window of T+1 = 65");
}
