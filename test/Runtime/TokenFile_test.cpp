//===- TokenFile_test.cpp - nanoGPT and llm.c token files -----------------===//

#include "data/TokenFile.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace sinter::rt;
using namespace sinter::rt::test;

namespace {

std::vector<uint8_t> llmcFile(int32_t magic, int32_t version, int32_t count,
                              const std::vector<uint8_t> &tokens) {
  int32_t header[256] = {magic, version, count};
  std::vector<uint8_t> out(sizeof(header) + tokens.size());
  std::memcpy(out.data(), header, sizeof(header));
  if (!tokens.empty())
    std::memcpy(out.data() + sizeof(header), tokens.data(), tokens.size());
  return out;
}

Expected<TokenFile> parse(const std::vector<uint8_t> &bytes,
                          std::optional<TokenType> t = std::nullopt) {
  return TokenFile::parse(FileBuffer::fromBytes(bytes, "data/train.bin"), t);
}

} // namespace

TEST(TokenFile, RawUint16) {
  std::vector<uint16_t> ids = {10, 11, 12, 13, 14, 15, 16, 50256};
  Expected<TokenFile> f = parse(asBytes(ids));
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_FALSE(f->hasLlmcHeader());
  EXPECT_EQ(f->tokenType(), TokenType::U16);
  EXPECT_EQ(f->numTokens(), 8u);
  EXPECT_EQ(f->token(7), 50256u);
  EXPECT_EQ(f->numWindows(3), 2u) << "(8 - 1) / 3";
  EXPECT_EQ(f->numWindows(7), 1u);
  EXPECT_EQ(f->numWindows(8), 0u);

  std::vector<int64_t> in(3), tgt(3);
  ASSERT_TRUE(f->copyWindow(1, 3, DType::I64, in.data(), tgt.data()).ok());
  EXPECT_EQ(in, (std::vector<int64_t>{13, 14, 15}));
  EXPECT_EQ(tgt, (std::vector<int64_t>{14, 15, 16}));
  std::vector<int32_t> in32(3), tgt32(3);
  ASSERT_TRUE(f->copyWindow(0, 3, DType::I32, in32.data(), tgt32.data()).ok());
  EXPECT_EQ(in32, (std::vector<int32_t>{10, 11, 12}));
  EXPECT_EQ(tgt32, (std::vector<int32_t>{11, 12, 13}));
  EXPECT_EQ(f->copyWindow(2, 3, DType::I64, in.data(), tgt.data()).message(),
            "data/train.bin: window 2 of length 3+1 is out of range; the file's 8 tokens hold 2 windows");
  EXPECT_EQ(f->copyWindow(0, 3, DType::F32, in.data(), tgt.data()).message(),
            "data/train.bin: token windows can be read as i64 or i32, not f32");
}

TEST(TokenFile, RawUint32) {
  std::vector<uint32_t> ids = {1, 100000, 3000000000u, 4};
  Expected<TokenFile> f = parse(asBytes(ids), TokenType::U32);
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->numTokens(), 4u);
  EXPECT_EQ(f->token(2), 3000000000u);
  std::vector<int64_t> in(3), tgt(3);
  ASSERT_TRUE(f->copyWindow(0, 3, DType::I64, in.data(), tgt.data()).ok());
  EXPECT_EQ(tgt[1], 3000000000);
  std::vector<int32_t> in32(3), tgt32(3);
  EXPECT_EQ(f->copyWindow(0, 3, DType::I32, in32.data(), tgt32.data()).message(),
            "data/train.bin: token 2 is 3000000000, which does not fit in an i32 input");
}

TEST(TokenFile, RawSizeErrors) {
  EXPECT_EQ(parse({1, 2, 3}).message(),
            "data/train.bin: holds 3 bytes, not a whole number of uint16 tokens (2 bytes each); the file is truncated or not a uint16 token file");
  EXPECT_EQ(parse({1, 2, 3, 4, 5, 6}, TokenType::U32).message(),
            "data/train.bin: holds 6 bytes, not a whole number of uint32 tokens (4 bytes each); the file is truncated or not a uint32 token file");
  Expected<TokenFile> empty = parse({});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->numWindows(1), 0u);
}

TEST(TokenFile, LlmcHeader) {
  std::vector<uint16_t> ids = {5, 6, 7, 8, 9};
  Expected<TokenFile> f = parse(llmcFile(20240520, 1, 5, asBytes(ids)));
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_TRUE(f->hasLlmcHeader());
  EXPECT_EQ(f->tokenType(), TokenType::U16);
  EXPECT_EQ(f->numTokens(), 5u);
  EXPECT_EQ(f->token(0), 5u);
  EXPECT_EQ(f->token(4), 9u);

  std::vector<uint32_t> wide = {70000, 1, 2};
  Expected<TokenFile> g = parse(llmcFile(20240520, 2, 3, asBytes(wide)));
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_EQ(g->tokenType(), TokenType::U32);
  EXPECT_EQ(g->token(0), 70000u);
}

TEST(TokenFile, LlmcErrors) {
  std::vector<uint16_t> ids = {5, 6, 7, 8, 9};
  EXPECT_EQ(parse(llmcFile(20240520, 1, 6, asBytes(ids))).message(),
            "data/train.bin: truncated: the llm.c header declares 6 uint16 tokens = 12 bytes after the header but the file holds 10");
  EXPECT_EQ(parse(llmcFile(20240520, 1, 4, asBytes(ids))).message(),
            "data/train.bin: trailing bytes: the llm.c header declares 4 uint16 tokens = 8 bytes after the header but the file holds 10 (2 more)");
  EXPECT_EQ(parse(llmcFile(20240520, 3, 5, asBytes(ids))).message(),
            "data/train.bin: llm.c header version 3 is not supported; expected 1 (uint16 tokens) or 2 (uint32 tokens)");
  EXPECT_EQ(parse(llmcFile(20240520, 1, 5, asBytes(ids)), TokenType::U32).message(),
            "data/train.bin: the config says uint32 tokens but the llm.c header (version 1) says uint16; set data.*.tokens.dtype to UINT16");
  std::vector<uint8_t> shortHeader = llmcFile(20240520, 1, 0, {});
  shortHeader.resize(100);
  EXPECT_EQ(parse(shortHeader).message(),
            "data/train.bin: truncated: the file starts with the llm.c magic 20240520 but holds 100 bytes, less than the 1,024-byte llm.c header");
  // Another magic is no llm.c header: the file is read as raw tokens (its
  // 1,034 bytes are a whole number of uint16s).
  Expected<TokenFile> raw = parse(llmcFile(20240521, 1, 5, asBytes(ids)));
  ASSERT_TRUE(raw.ok()) << raw.message();
  EXPECT_FALSE(raw->hasLlmcHeader());
  EXPECT_EQ(raw->numTokens(), 517u);
}

TEST(TokenFile, OpenFromDisk) {
  TempDir dir;
  std::vector<uint16_t> ids = {1, 2, 3};
  writeBytes(dir.file("t.bin"), asBytes(ids));
  Expected<TokenFile> f = TokenFile::open(dir.file("t.bin"));
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->path(), dir.file("t.bin"));
  EXPECT_EQ(f->numTokens(), 3u);
  EXPECT_FALSE(TokenFile::open(dir.file("none.bin")).ok());
}
