//===- Npy_test.cpp - .npy reading and writing ----------------------------===//

#include "data/Npy.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

using namespace sinter::rt;
using namespace sinter::rt::test;

namespace {

/// A .npy file with `header` verbatim (no padding added) and `dataBytes`
/// zero bytes of data.
std::vector<uint8_t> npyFile(int major, const std::string &header, size_t dataBytes) {
  std::vector<uint8_t> out = bytesOf("\x93NUMPY");
  out.push_back((uint8_t)major);
  out.push_back(0);
  size_t n = header.size();
  out.push_back((uint8_t)n);
  out.push_back((uint8_t)(n >> 8));
  if (major >= 2) {
    out.push_back((uint8_t)(n >> 16));
    out.push_back((uint8_t)(n >> 24));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), dataBytes, 0);
  return out;
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  Expected<NpyArray> a = NpyArray::parse(FileBuffer::fromBytes(bytes, "data/x.npy"));
  return a.ok() ? "(parsed)" : a.message();
}

std::string header(const std::string &descr, const std::string &fortran, const std::string &shape) {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

} // namespace

TEST(Npy, RoundTripEveryDType) {
  TempDir dir;
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32,
                  DType::Bool}) {
    Shape shape{3, 5};
    std::vector<uint8_t> data(15 * dtypeSize(t));
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = t == DType::Bool ? (uint8_t)(i % 2) : (uint8_t)(i * 7 + 1);
    std::string path = dir.file(std::string(dtypeName(t)) + ".npy");
    ASSERT_TRUE(writeNpy(path, t, shape, data.data()).ok());
    Expected<NpyArray> a = NpyArray::read(path);
    ASSERT_TRUE(a.ok()) << a.message();
    EXPECT_EQ(a->dtype(), t);
    EXPECT_EQ(a->shape(), shape);
    EXPECT_EQ(a->numElements(), 15u);
    EXPECT_EQ(a->formatVersion(), 1);
    ASSERT_EQ(a->byteSize(), data.size());
    EXPECT_EQ(std::memcmp(a->data(), data.data(), data.size()), 0) << dtypeName(t);
    EXPECT_EQ((a->data() - readBytes(path).data()) >= 0, true);
  }
}

TEST(Npy, ScalarAndEmpty) {
  double pi = 3.14159;
  Expected<std::vector<uint8_t>> scalar = encodeNpy(DType::F64, {}, &pi);
  ASSERT_TRUE(scalar.ok());
  Expected<NpyArray> a = NpyArray::parse(FileBuffer::fromBytes(*scalar, "s.npy"));
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_TRUE(a->shape().empty());
  EXPECT_EQ(a->numElements(), 1u);
  double back;
  std::memcpy(&back, a->data(), 8);
  EXPECT_EQ(back, pi);

  Expected<std::vector<uint8_t>> empty = encodeNpy(DType::F32, {0, 7}, nullptr);
  ASSERT_TRUE(empty.ok());
  Expected<NpyArray> e = NpyArray::parse(FileBuffer::fromBytes(*empty, "e.npy"));
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_EQ(e->numElements(), 0u);
  EXPECT_EQ(e->byteSize(), 0u);
}

// The bytes np.save writes (numpy 2.4), header included.
TEST(Npy, HeaderIsNumpys) {
  float zeros[12] = {};
  Expected<std::vector<uint8_t>> f = encodeNpy(DType::F32, {3, 4}, zeros);
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f->size(), 176u);
  std::string head(f->begin(), f->begin() + 128);
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
  EXPECT_EQ(head, std::string("\x93NUMPY\x01\x00v\x00", 10) + dict +
                      std::string(128 - 11 - dict.size(), ' ') + "\n");
  Expected<std::vector<uint8_t>> b = encodeNpy(DType::Bool, {5}, "\0\0\0\0\0");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->size(), 133u);
  EXPECT_EQ(std::string(b->begin() + 10, b->begin() + 70),
            "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }   ");
}

TEST(Npy, VersionTwoAndThree) {
  // A header over 65,535 bytes needs version 2.0: 30,000 dimensions of 1.
  Shape many(30000, 1);
  float one = 1;
  Expected<std::vector<uint8_t>> big = encodeNpy(DType::F32, many, &one);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ((*big)[6], 2);
  std::shared_ptr<const FileBuffer> file = FileBuffer::fromBytes(*big, "big.npy");
  Expected<NpyArray> a = NpyArray::parse(file);
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(a->formatVersion(), 2);
  EXPECT_EQ(a->shape().size(), 30000u);
  EXPECT_EQ(a->data() - file->data(), (ptrdiff_t)big->size() - 4);
  EXPECT_EQ((a->data() - file->data()) % 64, 0) << "numpy's 64-byte alignment";

  std::vector<uint8_t> v3 = npyFile(3, header("'<i4'", "False", "(2,)"), 8);
  Expected<NpyArray> c = NpyArray::parse(FileBuffer::fromBytes(v3, "v3.npy"));
  ASSERT_TRUE(c.ok()) << c.message();
  EXPECT_EQ(c->formatVersion(), 3);
  EXPECT_EQ(c->dtype(), DType::I32);
}

TEST(Npy, TruncatedAndTrailing) {
  std::string h = header("'<f4'", "False", "(1797, 64)");
  EXPECT_EQ(parseError(npyFile(1, h, 460000)),
            "data/x.npy: truncated: the header declares float32 [1797, 64] = 460,032 bytes of data but the file holds 460,000");
  EXPECT_EQ(parseError(npyFile(1, h, 460100)),
            "data/x.npy: trailing bytes: the header declares float32 [1797, 64] = 460,032 bytes of data but the file holds 460,100 (68 more)");
  EXPECT_EQ(parseError(npyFile(1, h, 460032)), "(parsed)");
  std::vector<uint8_t> cut = npyFile(1, h, 0);
  cut.resize(40);
  EXPECT_EQ(parseError(cut), "data/x.npy: truncated: the header length field says " +
                                 std::to_string(h.size()) + " bytes but only 30 bytes follow it");
  EXPECT_EQ(parseError(bytesOf("\x93NUMPY\x01")),
            "data/x.npy: truncated: the file ends inside the format version (7 bytes)");
  EXPECT_EQ(parseError(bytesOf(std::string("\x93NUMPY\x02\x00\x10\x00", 10))),
            "data/x.npy: truncated: the file ends inside the header length (10 bytes, a version 2.0 preamble is 12 bytes)");
}

TEST(Npy, BadMagicAndVersion) {
  EXPECT_EQ(parseError(bytesOf("hello world")),
            "data/x.npy: not a .npy file: it starts with 'hello ', expected the magic '\\x93NUMPY'");
  EXPECT_EQ(parseError({}), "data/x.npy: not a .npy file: it starts with '', expected the magic '\\x93NUMPY'");
  EXPECT_EQ(parseError(bytesOf("PK\x03\x04rest")),
            "data/x.npy: is a .npz (zip) archive, not a .npy file; extract its arrays with numpy.load and save each with numpy.save");
  std::vector<uint8_t> v4 = npyFile(1, header("'<f4'", "False", "(1,)"), 4);
  v4[6] = 4;
  EXPECT_EQ(parseError(v4), "data/x.npy: unsupported .npy format version 4.0; expected 1.0, 2.0 or 3.0");
  v4[6] = 1;
  v4[7] = 1;
  EXPECT_EQ(parseError(v4), "data/x.npy: unsupported .npy format version 1.1; expected 1.0, 2.0 or 3.0");
}

TEST(Npy, MalformedHeaders) {
  EXPECT_EQ(parseError(npyFile(1, "{'descr': '<f4', 'fortran_order': False 'shape': (1,)}", 4)),
            "data/x.npy: malformed header \"{'descr': '<f4', 'fortran_order': False 'shape': (1,)}\": expected ',' or '}' at byte 40, found \"'shape': (1,\"...");
  EXPECT_EQ(parseError(npyFile(1, "[1, 2]", 0)),
            "data/x.npy: malformed header: expected a dict with the keys 'descr', 'fortran_order' and 'shape', found a list [1, 2]");
  EXPECT_EQ(parseError(npyFile(1, "{'descr': '<f4', 'shape': (1,)}", 4)),
            "data/x.npy: malformed header: the key 'fortran_order' is missing; expected exactly the keys 'descr', 'fortran_order' and 'shape'");
  EXPECT_EQ(parseError(npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4)),
            "data/x.npy: malformed header: unexpected key 'x'; expected exactly the keys 'descr', 'fortran_order' and 'shape'");
  EXPECT_EQ(parseError(npyFile(1, header("4", "False", "(1,)"), 4)),
            "data/x.npy: malformed header: 'descr' must be a string, found an integer 4");
  EXPECT_EQ(parseError(npyFile(1, header("'<f4'", "0", "(1,)"), 4)),
            "data/x.npy: malformed header: 'fortran_order' must be True or False, found an integer 0");
  EXPECT_EQ(parseError(npyFile(1, header("'<f4'", "False", "[1]"), 4)),
            "data/x.npy: malformed header: 'shape' must be a tuple of integers, found a list [1]");
  EXPECT_EQ(parseError(npyFile(1, header("'<f4'", "False", "(2, 'a')"), 4)),
            "data/x.npy: malformed header: 'shape' must be a tuple of integers, found a string 'a' in (2, 'a')");
  EXPECT_EQ(parseError(npyFile(1, header("'<f4'", "False", "(2, -3)"), 4)),
            "data/x.npy: malformed header: 'shape' (2, -3) has a negative dimension");
}

TEST(Npy, UnsupportedTypes) {
  EXPECT_EQ(parseError(npyFile(1, header("'>f4'", "False", "(1,)"), 4)),
            "data/x.npy: big-endian data (descr '>f4') is not supported; save the array as little-endian, e.g. arr.astype('<f4')");
  EXPECT_EQ(parseError(npyFile(1, header("'<u2'", "False", "(1,)"), 2)),
            "data/x.npy: unsupported element type (descr '<u2'); expected one of '<f8' (f64), '<f4' (f32), '<f2' (f16), '<i8' (i64), '<i4' (i32), '|b1' (bool), 'bfloat16' (bf16)");
  EXPECT_EQ(parseError(npyFile(1, header("'<V2'", "False", "(1,)"), 2)),
            "data/x.npy: descr '<V2' (a 2-byte void type) is ambiguous: np.save writes it for ml_dtypes.bfloat16 but also for any other 2-byte type; write bfloat16 arrays with descr 'bfloat16' or save them as float32");
  EXPECT_EQ(parseError(npyFile(1, header("[('a', '<f4')]", "False", "(1,)"), 4)),
            "data/x.npy: structured arrays (a list as 'descr') are not supported; expected one of '<f8' (f64), '<f4' (f32), '<f2' (f16), '<i8' (i64), '<i4' (i32), '|b1' (bool), 'bfloat16' (bf16)");
  EXPECT_EQ(parseError(npyFile(1, header("'<f4'", "True", "(2, 2)"), 16)),
            "data/x.npy: fortran_order=True (column-major) arrays are not supported; save a C-order array, e.g. numpy.save(path, numpy.ascontiguousarray(arr))");
  std::vector<uint8_t> bf = npyFile(1, header("'bfloat16'", "False", "(3,)"), 6);
  Expected<NpyArray> a = NpyArray::parse(FileBuffer::fromBytes(bf, "bf.npy"));
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(a->dtype(), DType::BF16);
}

TEST(Npy, OverflowingShapes) {
  EXPECT_EQ(parseError(npyFile(1, header("'<f8'", "False", "(4294967296, 4294967296)"), 0)),
            "data/x.npy: the header declares float64 [4294967296, 4294967296], more bytes than fit in 64 bits");
  EXPECT_EQ(parseError(npyFile(1, header("'<f8'", "False", "(2305843009213693952,)"), 0)),
            "data/x.npy: the header declares float64 [2305843009213693952], more bytes than fit in 64 bits");
  EXPECT_EQ(parseError(npyFile(1, header("'<f4'", "False", "(99999999999999999999,)"), 0)),
            "data/x.npy: malformed header: 'shape' ((an integer over 64 bits),) has a dimension that does not fit in 64 bits");
  // A zero dimension makes the size 0 however large the others are.
  EXPECT_EQ(parseError(npyFile(1, header("'<f4'", "False", "(0, 18446744073709551615)"), 0)), "(parsed)");
}

TEST(Npy, WriteErrors) {
  TempDir dir;
  float x = 0;
  Status s = writeNpy(dir.file("missing/x.npy"), DType::F32, {1}, &x);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot create a temporary file"), std::string::npos);
  s = writeNpy(dir.file("x.npy"), DType::F64, {1ull << 62, 4}, &x);
  EXPECT_EQ(s.message(), dir.file("x.npy") + ": cannot write float64 [4611686018427387904, 4]: the size does not fit in 64 bits");
}

// An array written as its batches arrive (an eval's outputs) is the file
// writeNpy makes of the whole; a writer given too few or too many bytes
// fails and leaves no file.
TEST(Npy, WriterAppendsInPieces) {
  TempDir dir;
  std::vector<float> values(24);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = float(i) * 0.5f;
  Expected<NpyWriter> w = NpyWriter::create(dir.file("pieces.npy"), DType::F32, {4, 6});
  ASSERT_TRUE(w.ok()) << w.message();
  for (size_t at = 0; at < values.size(); at += 6)
    ASSERT_TRUE(w->append(&values[at], 6 * sizeof(float)).ok());
  ASSERT_TRUE(w->commit().ok());
  ASSERT_TRUE(writeNpy(dir.file("whole.npy"), DType::F32, {4, 6}, values.data()).ok());
  EXPECT_EQ(readBytes(dir.file("pieces.npy")), readBytes(dir.file("whole.npy")));

  {
    Expected<NpyWriter> shortOne = NpyWriter::create(dir.file("short.npy"), DType::F32, {4, 6});
    ASSERT_TRUE(shortOne.ok());
    ASSERT_TRUE(shortOne->append(values.data(), 12 * sizeof(float)).ok());
    Status s = shortOne->commit();
    EXPECT_NE(s.message().find("48 of 96 bytes written"), std::string::npos) << s.message();
    Expected<NpyWriter> longOne = NpyWriter::create(dir.file("long.npy"), DType::F32, {2});
    ASSERT_TRUE(longOne.ok());
    EXPECT_FALSE(longOne->append(values.data(), 3 * sizeof(float)).ok());
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("short.npy")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("long.npy")));
}
