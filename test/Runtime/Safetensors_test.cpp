//===- Safetensors_test.cpp - .safetensors reading and writing ------------===//

#include "checkpoint/Safetensors.h"
#include "support/Crc32c.h"

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

/// 8 lowercase hex digits, as checksums appear in messages and metadata.
std::string hex8(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof(buf), "%08x", v);
  return buf;
}

/// Where the data section of a well-formed file starts.
size_t dataStart(const std::vector<uint8_t> &bytes) {
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= (uint64_t)bytes[i] << (8 * i);
  return (size_t)(8 + n);
}

/// Tensors of every size class, as a checkpoint holds them, written with
/// their checksums.
std::vector<uint8_t> checkpointLikeFile() {
  std::vector<float> w(24), b(6);
  std::vector<double> m(24);
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = 0.25f * (float)i - 3;
    m[i] = 1e-3 * (double)i;
  }
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = (float)i;
  int32_t ids[7] = {3, 1, 4, 1, 5, 9, 2};
  uint8_t mask[3] = {1, 0, 1};
  uint16_t scale[1] = {0x3c00};
  Expected<std::vector<uint8_t>> bytes = encodeSafetensors(
      {{"fc1.weight", DType::F32, {4, 6}, w.data()},
       {"fc1.bias", DType::F32, {6}, b.data()},
       {"optimizer.fc1.weight.m", DType::F64, {4, 6}, m.data()},
       {"ids", DType::I32, {7}, ids},
       {"mask", DType::Bool, {3}, mask},
       {"scale", DType::F16, {1}, scale},
       {"empty", DType::F32, {0}, nullptr}},
      {{"step", "20"}});
  if (!bytes.ok()) {
    ADD_FAILURE() << bytes.message();
    return {};
  }
  return bytes.take();
}

} // namespace

// The exact bytes the reference library writes for the same tensors and
// metadata (safetensors 0.8 in Python: safetensors.numpy.save), the metadata
// holding the checksums Sinter adds (computed one bit at a time from the
// definition of CRC-32C, independently of Crc32c.cpp).
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
      "{\"__metadata__\":{\"format\":\"pt\","
      "\"sinter.crc32c.a\":\"78743a5d\",\"sinter.crc32c.b\":\"22046d5a\","
      "\"sinter.crc32c.c\":\"a016d052\",\"sinter.crc32c.h\":\"ac4b870f\","
      "\"step\":\"10\"},"
      "\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[16,40]},"
      "\"h\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[40,46]},"
      "\"c\":{\"dtype\":\"BOOL\",\"shape\":[1],\"data_offsets\":[46,47]}}  ";
  std::vector<uint8_t> want = stFile(json, 0);
  want.insert(want.end(), (const uint8_t *)b, (const uint8_t *)b + 16);
  want.insert(want.end(), (const uint8_t *)a, (const uint8_t *)a + 24);
  want.insert(want.end(), (const uint8_t *)h, (const uint8_t *)h + 6);
  want.push_back(1);
  ASSERT_EQ(want.size(), 439u);
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
  EXPECT_EQ(f->metadata(), (std::map<std::string, std::string>{{"sinter.step", "42"}}))
      << "the checksums are not part of metadata()";
  for (size_t k = 0; k < 7; ++k) {
    const SafetensorsEntry *e = f->find(tensors[k].name);
    ASSERT_NE(e, nullptr) << tensors[k].name;
    EXPECT_EQ(e->dtype, tensors[k].dtype);
    EXPECT_EQ(e->shape, tensors[k].shape);
    ASSERT_EQ(e->byteSize(), storage[k].size());
    EXPECT_EQ(std::memcmp(f->data(*e), storage[k].data(), storage[k].size()), 0);
    EXPECT_EQ(e->crc32c, crc32c(storage[k].data(), storage[k].size())) << e->name;
    // Every tensor is aligned to its element size within the file.
    EXPECT_EQ((uintptr_t)f->data(*e) % dtypeSize(e->dtype), 0u) << e->name;
  }
  EXPECT_EQ(f->find("empty")->byteSize(), 0u);
  EXPECT_EQ(f->find("empty")->crc32c, 0u) << "the CRC-32C of no bytes";
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
  EXPECT_EQ(encodeSafetensors({{"a", DType::F32, {1}, &x}}, {{"sinter.crc32c.a", "00000000"}}).message(),
            "metadata key 'sinter.crc32c.a' is reserved: the tensors' checksums are written under 'sinter.crc32c.'");
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

// A byte changed in the middle of any tensor's data is noticed, and the
// message names the file and that tensor.
TEST(Safetensors, FlippedByteInEachTensorIsRefused) {
  std::vector<uint8_t> clean = checkpointLikeFile();
  ASSERT_FALSE(clean.empty());
  Expected<SafetensorsFile> original = SafetensorsFile::parse(FileBuffer::fromBytes(clean, "clean"));
  ASSERT_TRUE(original.ok()) << original.message();
  size_t start = dataStart(clean);
  TempDir dir;
  std::string path = dir.file("step-20.safetensors");
  size_t damaged = 0;
  for (const SafetensorsEntry &e : original->tensors()) {
    if (e.byteSize() == 0)
      continue;
    std::vector<uint8_t> bytes = clean;
    uint8_t *tensor = bytes.data() + start + e.begin;
    tensor[e.byteSize() / 2] ^= 0x01;
    writeBytes(path, bytes);
    Expected<SafetensorsFile> f = SafetensorsFile::read(path);
    ASSERT_FALSE(f.ok()) << e.name << ": the damage went unnoticed";
    EXPECT_EQ(f.message(), path + ": tensor '" + e.name +
                               "' is damaged: its checksum does not match (expected crc32c " +
                               hex8(crc32c(clean.data() + start + e.begin, e.byteSize())) +
                               ", got " + hex8(crc32c(tensor, e.byteSize())) +
                               "); the file changed after it was written");
    ++damaged;
  }
  EXPECT_EQ(damaged, 6u) << "every tensor but the empty one";
  writeBytes(path, clean);
  EXPECT_TRUE(SafetensorsFile::read(path).ok()) << "the undamaged file loads";
}

// Not only the middle: a flipped bit anywhere in the data names the tensor
// that holds it.
TEST(Safetensors, EveryByteOfTheDataIsChecked) {
  std::vector<uint8_t> clean = checkpointLikeFile();
  ASSERT_FALSE(clean.empty());
  Expected<SafetensorsFile> original = SafetensorsFile::parse(FileBuffer::fromBytes(clean, "clean"));
  ASSERT_TRUE(original.ok()) << original.message();
  size_t start = dataStart(clean);
  ASSERT_GT(clean.size(), start);
  for (size_t at = start; at < clean.size(); ++at) {
    const SafetensorsEntry *owner = nullptr;
    for (const SafetensorsEntry &e : original->tensors())
      if (at - start >= e.begin && at - start < e.end)
        owner = &e;
    ASSERT_NE(owner, nullptr) << "byte " << at;
    std::vector<uint8_t> bytes = clean;
    bytes[at] ^= 0x80;
    std::string m = parseError(bytes);
    EXPECT_EQ(m.rfind("ckpt.safetensors: tensor '" + owner->name + "' is damaged: ", 0), 0u)
        << "byte " << at << ": " << m;
  }
}

// PyTorch, numpy and other writers record no checksums: their files load,
// and nothing is invented for them.
TEST(Safetensors, FileWithoutChecksumsStillLoads) {
  float a[2] = {1.5f, -2};
  int32_t b[1] = {7};
  std::vector<uint8_t> bytes = stFile("{\"__metadata__\":{\"format\":\"pt\"}," +
                                          entry("a", "F32", "[2]", 0, 8) + "," +
                                          entry("b", "I32", "[1]", 8, 12) + "}    ",
                                      0);
  bytes.insert(bytes.end(), (const uint8_t *)a, (const uint8_t *)a + 8);
  bytes.insert(bytes.end(), (const uint8_t *)b, (const uint8_t *)b + 4);
  Expected<SafetensorsFile> f = SafetensorsFile::parse(FileBuffer::fromBytes(bytes, "torch.safetensors"));
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->metadata(), (std::map<std::string, std::string>{{"format", "pt"}}));
  ASSERT_EQ(f->tensors().size(), 2u);
  for (const SafetensorsEntry &e : f->tensors())
    EXPECT_FALSE(e.crc32c.has_value()) << e.name;
  EXPECT_EQ(std::memcmp(f->data(*f->find("a")), a, 8), 0);
  EXPECT_EQ(std::memcmp(f->data(*f->find("b")), b, 4), 0);
}

// The checksum in the header is as likely to be hit as the data it guards.
TEST(Safetensors, DamagedChecksumValueIsRefused) {
  std::vector<uint8_t> clean = checkpointLikeFile();
  ASSERT_FALSE(clean.empty());
  std::string text(clean.begin(), clean.end());
  for (const std::string name : {"fc1.weight", "mask", "empty"}) {
    std::string key = "\"" + safetensorsChecksumKey(name) + "\":\"";
    size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    size_t value = at + key.size();
    std::string recorded = text.substr(value, 8);

    // Another hex digit: a different checksum, which the data does not match.
    std::vector<uint8_t> bytes = clean;
    bytes[value + 3] = recorded[3] == '0' ? '1' : '0';
    std::string altered(bytes.begin() + value, bytes.begin() + value + 8);
    EXPECT_EQ(parseError(bytes), "ckpt.safetensors: tensor '" + name +
                                     "' is damaged: its checksum does not match (expected crc32c " +
                                     altered + ", got " + recorded +
                                     "); the file changed after it was written");

    // Not a hex digit at all.
    bytes[value + 3] = 'g';
    EXPECT_EQ(parseError(bytes), "ckpt.safetensors: tensor '" + name + "': its checksum '" +
                                     std::string(bytes.begin() + value, bytes.begin() + value + 8) +
                                     "' is not 8 lowercase hexadecimal digits; the header is damaged");
  }
}

// A checksum that names no tensor, or a tensor without one in a file that
// has them, means the header changed (a renamed tensor, a lost key).
TEST(Safetensors, ChecksumsMustMatchTheTensors) {
  std::string zeros = hex8(crc32c(std::vector<uint8_t>(4, 0).data(), 4));
  std::string a = entry("a", "F32", "[1]", 0, 4), b = entry("b", "F32", "[1]", 4, 8);
  EXPECT_EQ(parseError(stFile("{\"__metadata__\":{\"sinter.crc32c.a\":\"" + zeros + "\"}," + a +
                              "," + b + "}",
                              8)),
            "ckpt.safetensors: tensor 'b' has no checksum (no 'sinter.crc32c.b' in '__metadata__'), "
            "but the other tensors have; the header is damaged, or the file was edited without "
            "updating its checksums");
  EXPECT_EQ(parseError(stFile("{\"__metadata__\":{\"sinter.crc32c.a\":\"" + zeros +
                              "\",\"sinter.crc32c.b\":\"" + zeros + "\",\"sinter.crc32c.c\":\"" +
                              zeros + "\"}," + a + "," + b + "}",
                              8)),
            "ckpt.safetensors: '__metadata__' holds a checksum for tensor 'c', which the file does "
            "not hold; the header is damaged, or the file was edited without updating its checksums");
  EXPECT_EQ(parseError(stFile("{\"__metadata__\":{\"sinter.crc32c.a\":\"" + zeros +
                              "\",\"sinter.crc32c.b\":\"" + zeros + "\"}," + a + "," + b + "}",
                              8)),
            "(parsed)");

  // A tensor's name changed in a file Sinter wrote.
  std::vector<uint8_t> bytes = checkpointLikeFile();
  std::string text(bytes.begin(), bytes.end());
  size_t at = text.find("\"fc1.bias\":{");
  ASSERT_NE(at, std::string::npos);
  bytes[at + 4] = '2';
  EXPECT_EQ(parseError(bytes),
            "ckpt.safetensors: '__metadata__' holds a checksum for tensor 'fc1.bias', which the "
            "file does not hold; the header is damaged, or the file was edited without updating "
            "its checksums");
}

// What the reader returns can be written again and read back the same
// (ReaderFuzzer.cpp relies on it): the checksums are recomputed, never
// passed through as metadata.
TEST(Safetensors, RewritingAReadFileKeepsItsMetadata) {
  std::vector<uint8_t> clean = checkpointLikeFile();
  Expected<SafetensorsFile> f = SafetensorsFile::parse(FileBuffer::fromBytes(clean, "a"));
  ASSERT_TRUE(f.ok()) << f.message();
  std::vector<SafetensorsTensor> tensors;
  for (const SafetensorsEntry &e : f->tensors())
    tensors.push_back({e.name, e.dtype, e.shape, f->data(e)});
  Expected<std::vector<uint8_t>> again = encodeSafetensors(tensors, f->metadata());
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(*again, clean);
}
