//===- Safetensors_test.cpp - .safetensors reading and writing ------------===//

#include "checkpoint/Safetensors.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace sinter::rt;
using namespace sinter::rt::test;

namespace {

/// A file with header `json` verbatim and `dataBytes` zero bytes of data.
std::vector<uint8_t> stFile(const std::string &json, size_t dataBytes) {
  std::vector<uint8_t> out;
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i)
    out.push_back((uint8_t)(n >> (8 * i)));
  out.insert(out.end(), json.begin(), json.end());
  out.insert(out.end(), dataBytes, 0);
  return out;
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  Expected<SafetensorsFile> f = SafetensorsFile::parse(FileBuffer::fromBytes(bytes, "ckpt.safetensors"));
  return f.ok() ? "(parsed)" : f.message();
}

std::string entry(const std::string &name, const std::string &dtype, const std::string &shape,
                  uint64_t b, uint64_t e) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":[" + std::to_string(b) + "," + std::to_string(e) + "]}";
}

} // namespace

// The exact bytes the reference library writes for the same tensors
// (safetensors 0.8 in Python: safetensors.numpy.save).
TEST(Safetensors, SameBytesAsTheReferenceWriter) {
  float a[6] = {0, 1, 2, 3, 4, 5};
  int64_t b[2] = {1, 2};
  uint8_t c[1] = {1};
  uint16_t h[3] = {0x3c00, 0x3c00, 0x3c00};
  Expected<std::vector<uint8_t>> bytes = encodeSafetensors(
      {{"a", DType::F32, {2, 3}, a}, {"b", DType::I64, {2}, b}, {"c", DType::Bool, {1}, c},
       {"h", DType::F16, {3}, h}},
      {{"step", "10"}, {"format", "pt"}});
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  std::string json =
      "{\"__metadata__\":{\"format\":\"pt\",\"step\":\"10\"},"
      "\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[16,40]},"
      "\"h\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[40,46]},"
      "\"c\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[46,47]}}      ";
  std::vector<uint8_t> want = stFile(json, 0);
  want.insert(want.end(), (const uint8_t *)b, (const uint8_t *)b + 16);
  want.insert(want.end(), (const uint8_t *)a, (const uint8_t *)a + 24);
  want.insert(want.end(), (const uint8_t *)h, (const uint8_t *)h + 6);
  want.push_back(1);
  ASSERT_EQ(want.size(), 327u);
  EXPECT_EQ(*bytes, want);
}

TEST(Safetensors, RoundTripEveryDType) {
  TempDir dir;
  std::vector<std::vector<uint8_t>> storage;
  std::vector<SafetensorsTensor> tensors;
  int i = 0;
  for (DType t : {DType::F64, DType::F32, DType::BF16, DType::F16, DType::I64, DType::I32,
                  DType::Bool}) {
    Shape shape{2, (uint64_t)(i + 1)};
    std::vector<uint8_t> data(2 * (i + 1) * dtypeSize(t));
    for (size_t k = 0; k < data.size(); ++k)
      data[k] = t == DType::Bool ? (uint8_t)(k % 2) : (uint8_t)(k + 17 * i);
    storage.push_back(std::move(data));
    tensors.push_back({"layer." + std::to_string(i) + ".weight", t, shape, nullptr});
    ++i;
  }
  for (size_t k = 0; k < tensors.size(); ++k)
    tensors[k].data = storage[k].data();
  tensors.push_back({"empty", DType::F32, {0, 4}, nullptr});
  std::string path = dir.file("model.safetensors");
  ASSERT_TRUE(writeSafetensors(path, tensors, {{"sinter.step", "42"}}).ok());

  Expected<SafetensorsFile> f = SafetensorsFile::read(path);
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->tensors().size(), 8u);
  EXPECT_EQ(f->metadata().at("sinter.step"), "42");
  uint8_t *fileStart = nullptr;
  (void)fileStart;
  for (size_t k = 0; k < 7; ++k) {
    const SafetensorsEntry *e = f->find(tensors[k].name);
    ASSERT_NE(e, nullptr) << tensors[k].name;
    EXPECT_EQ(e->dtype, tensors[k].dtype);
    EXPECT_EQ(e->shape, tensors[k].shape);
    ASSERT_EQ(e->byteSize(), storage[k].size());
    EXPECT_EQ(std::memcmp(f->data(*e), storage[k].data(), storage[k].size()), 0);
    // Every tensor is aligned to its element size within the file.
    EXPECT_EQ((uintptr_t)f->data(*e) % dtypeSize(e->dtype), 0u) << e->name;
  }
  EXPECT_EQ(f->find("empty")->byteSize(), 0u);
  EXPECT_EQ(f->find("nope"), nullptr);
}

TEST(Safetensors, ByteReproducible) {
  float x[2] = {1, 2}, y[1] = {3};
  Expected<std::vector<uint8_t>> one = encodeSafetensors({{"x", DType::F32, {2}, x}, {"y", DType::F32, {1}, y}});
  Expected<std::vector<uint8_t>> two = encodeSafetensors({{"y", DType::F32, {1}, y}, {"x", DType::F32, {2}, x}});
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(*one, *two) << "the order of the arguments does not matter";
  EXPECT_EQ((one->size() - 12) % 8, 0u) << "the data starts at a multiple of 8";
  Expected<std::vector<uint8_t>> none = encodeSafetensors({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(parseError(*none), "(parsed)");
}

TEST(Safetensors, WriteErrors) {
  float x = 0;
  EXPECT_EQ(encodeSafetensors({{"a", DType::F32, {1}, &x}, {"a", DType::F32, {1}, &x}}).message(),
            "two tensors are named 'a'; names must be unique");
  EXPECT_EQ(encodeSafetensors({{"", DType::F32, {1}, &x}}).message(),
            "a tensor has an empty name; every tensor needs a name");
  EXPECT_EQ(encodeSafetensors({{"__metadata__", DType::F32, {1}, &x}}).message(),
            "a tensor cannot be named '__metadata__', which the format reserves");
  EXPECT_EQ(encodeSafetensors({{"bad\xff", DType::F32, {1}, &x}}).message(),
            "tensor name 'bad\\xff' is not valid UTF-8");
  TempDir dir;
  EXPECT_EQ(writeSafetensors(dir.file("x.safetensors"), {{"big", DType::F64, {1ull << 62, 8}, &x}}).message(),
            dir.file("x.safetensors") + ": tensor 'big' [4611686018427387904, 8] makes the file larger than 2^64 bytes");
  EXPECT_EQ(listDir(dir.path()).size(), 0u);
}

TEST(Safetensors, EscapedNamesRoundTrip) {
  float x = 5;
  std::string name = "we\"ird\\name\n\xc3\xa9";
  Expected<std::vector<uint8_t>> bytes = encodeSafetensors({{name, DType::F32, {}, &x}});
  ASSERT_TRUE(bytes.ok());
  Expected<SafetensorsFile> f = SafetensorsFile::parse(FileBuffer::fromBytes(*bytes, "e.safetensors"));
  ASSERT_TRUE(f.ok()) << f.message();
  ASSERT_NE(f->find(name), nullptr);
  EXPECT_TRUE(f->find(name)->shape.empty());
}

TEST(Safetensors, HeaderLengthErrors) {
  EXPECT_EQ(parseError({1, 2, 3}),
            "ckpt.safetensors: the file holds 3 bytes; a safetensors file starts with an 8-byte header length");
  EXPECT_EQ(parseError({0, 0, 0, 0, 0, 0, 0, 1, '{', '}'}),
            "ckpt.safetensors: the header length is 72,057,594,037,927,936 bytes, over the format's limit of 100,000,000; this is not a safetensors file or it is corrupt");
  EXPECT_EQ(parseError({100, 0, 0, 0, 0, 0, 0, 0, '{', '}'}),
            "ckpt.safetensors: truncated: the header length is 100 bytes but only 2 follow it");
  EXPECT_EQ(parseError(stFile("[]", 0)),
            "ckpt.safetensors: the header does not start with '{'; a safetensors header is a JSON object");
  EXPECT_EQ(parseError(stFile("", 0)),
            "ckpt.safetensors: the header does not start with '{'; a safetensors header is a JSON object");
}

TEST(Safetensors, BadJson) {
  std::string m = parseError(stFile("{\"a\": {\"dtype\": \"F32\",}}", 0));
  EXPECT_EQ(m.rfind("ckpt.safetensors: malformed header JSON: syntax error at byte 22: ", 0), 0u) << m;
  EXPECT_EQ(parseError(stFile("{\"a\":1} {", 0)).rfind("ckpt.safetensors: malformed header JSON: syntax error", 0), 0u);
  EXPECT_EQ(parseError(stFile("{\"a\":[[[[[[[[[1]]]]]]]]]}", 0)),
            "ckpt.safetensors: malformed header JSON: nested more than 8 levels deep");
}

TEST(Safetensors, EntryErrors) {
  EXPECT_EQ(parseError(stFile("{\"a\":5}", 0)),
            "ckpt.safetensors: tensor 'a': expected an object with 'dtype', 'shape' and 'data_offsets', found the number 5");
  EXPECT_EQ(parseError(stFile("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4)),
            "ckpt.safetensors: tensor 'a': the key 'data_offsets' is missing; expected 'dtype', 'shape' and 'data_offsets'");
  EXPECT_EQ(parseError(stFile("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4)),
            "ckpt.safetensors: tensor 'a': unexpected key 'x'; expected exactly 'dtype', 'shape' and 'data_offsets'");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "U8", "[1]", 0, 1) + "}", 1)),
            "ckpt.safetensors: tensor 'a': dtype 'U8' is not supported; expected one of F64, F32, BF16, F16, I64, I32, BOOL");
  EXPECT_EQ(parseError(stFile("{\"a\":{\"dtype\":7,\"shape\":[1],\"data_offsets\":[0,4]}}", 4)),
            "ckpt.safetensors: tensor 'a': 'dtype' must be a string such as \"F32\", found the number 7");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F32", "[-1]", 0, 4) + "}", 4)),
            "ckpt.safetensors: tensor 'a': 'shape' must be an array of non-negative integers (each below 2^64), found the number -1");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F32", "[1.5]", 0, 4) + "}", 4)),
            "ckpt.safetensors: tensor 'a': 'shape' must be an array of non-negative integers (each below 2^64), found the number '1.5'");
  EXPECT_EQ(parseError(stFile("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4)),
            "ckpt.safetensors: tensor 'a': 'data_offsets' must be an array [begin, end] of two integers, found an array of 1");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F32", "[1]", 4, 0) + "}", 4)),
            "ckpt.safetensors: tensor 'a': data_offsets [4, 0] end before they begin; expected [begin, end] with begin <= end");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F32", "[2,3]", 0, 20) + "}", 20)),
            "ckpt.safetensors: tensor 'a': shape [2, 3] of F32 is 24 bytes but data_offsets [0, 20] span 20");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F64", "[4294967296,4294967296]", 0, 8) + "}", 8)),
            "ckpt.safetensors: tensor 'a': shape [4294967296, 4294967296] of F64 has more bytes than fit in 64 bits");
  // Found by the fuzzer's round trip: the writer refuses empty names, so the
  // reader does too.
  EXPECT_EQ(parseError(stFile("{" + entry("", "F32", "[1]", 0, 4) + "}", 4)),
            "ckpt.safetensors: a tensor has an empty name (\"\" in the header); every tensor needs a name");
  EXPECT_EQ(parseError(stFile("{\"__metadata__\":{\"a\":1}}", 0)),
            "ckpt.safetensors: '__metadata__' entry 'a' must be a string, found the number 1");
  EXPECT_EQ(parseError(stFile("{\"__metadata__\":[]}", 0)),
            "ckpt.safetensors: '__metadata__' must be an object of strings, found an array");
}

TEST(Safetensors, OffsetErrors) {
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F32", "[4]", 0, 16) + "," + entry("b", "F32", "[4]", 8, 24) + "}", 24)),
            "ckpt.safetensors: tensor 'b': data_offsets [8, 24] overlap tensor 'a' at [0, 16]");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F32", "[4]", 0, 16) + "," + entry("b", "F32", "[4]", 24, 40) + "}", 40)),
            "ckpt.safetensors: bytes [16, 24) of the data section belong to no tensor (between 'a' and 'b'); the tensors must cover the data without gaps");
  EXPECT_EQ(parseError(stFile("{" + entry("b", "F32", "[1]", 4, 8) + "}", 8)),
            "ckpt.safetensors: bytes [0, 4) of the data section belong to no tensor (before 'b'); the tensors must cover the data without gaps");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F32", "[4]", 0, 16) + "}", 12)),
            "ckpt.safetensors: tensor 'a': data_offsets [0, 16] end past the data section, which holds 12 bytes");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F32", "[4]", 0, 16) + "}", 20)),
            "ckpt.safetensors: the data section holds 20 bytes but the tensors cover 16; the last 4 bytes belong to no tensor");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F32", "[4]", 0, 16) + "," + entry("a", "F32", "[4]", 16, 32) + "}", 32)),
            "ckpt.safetensors: malformed header JSON: the key 'a' appears twice in the same object");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F32", "[4]", 0, 16) + "," + entry("z", "F32", "[0]", 8, 8) + "}", 16)),
            "ckpt.safetensors: tensor 'z': data_offsets [8, 8] overlap tensor 'a' at [0, 16]");
  EXPECT_EQ(parseError(stFile("{" + entry("a", "F32", "[4]", 0, 16) + "," + entry("z", "F32", "[0]", 16, 16) + "}   ", 16)),
            "(parsed)");
}
