//===- TokenFile.cpp - Flat files of token ids ----------------------------===//

#include "data/TokenFile.h"

#include "support/Format.h"

#include <cstring>

namespace sinter::rt {
namespace {

uint32_t loadLE32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

} // namespace

const char *tokenTypeName(TokenType t) { return t == TokenType::U16 ? "uint16" : "uint32"; }

Expected<TokenFile> TokenFile::open(const std::string &path, std::optional<TokenType> type) {
  Expected<std::shared_ptr<const FileBuffer>> file = FileBuffer::open(path);
  if (!file.ok())
    return file.status();
  return parse(file.take(), type);
}

Expected<TokenFile> TokenFile::parse(std::shared_ptr<const FileBuffer> file,
                                     std::optional<TokenType> type) {
  const std::string &name = file->name();
  const uint8_t *p = file->data();
  uint64_t size = file->size();
  auto error = [&](const std::string &what) { return Status::error(name + ": " + what); };

  TokenFile tf;
  if (size >= 4 && (int32_t)loadLE32(p) == kLlmcMagic) {
    if (size < kLlmcHeaderBytes)
      return error("truncated: the file starts with the llm.c magic 20240520 but holds " +
                   formatBytes(size) + ", less than the 1,024-byte llm.c header");
    uint32_t version = loadLE32(p + 4);
    if (version != 1 && version != 2)
      return error("llm.c header version " + std::to_string(version) +
                   " is not supported; expected 1 (uint16 tokens) or 2 (uint32 tokens)");
    TokenType headerType = version == 1 ? TokenType::U16 : TokenType::U32;
    if (type && *type != headerType)
      return error(std::string("the config says ") + tokenTypeName(*type) +
                   " tokens but the llm.c header (version " + std::to_string(version) +
                   ") says " + tokenTypeName(headerType) + "; set data.*.tokens.dtype to " +
                   (headerType == TokenType::U16 ? "UINT16" : "UINT32"));
    // llm.c writes the count as int32; read it unsigned so files of 2^31 or
    // more tokens (which overflow llm.c's own field) still give a message.
    uint64_t declared = loadLE32(p + 8);
    uint64_t bytes = declared * tokenSize(headerType);
    uint64_t held = size - kLlmcHeaderBytes;
    if (held < bytes)
      return error("truncated: the llm.c header declares " + formatCount(declared) + " " +
                   tokenTypeName(headerType) + " tokens = " + formatBytes(bytes) +
                   " after the header but the file holds " + formatCount(held));
    if (held > bytes)
      return error("trailing bytes: the llm.c header declares " + formatCount(declared) + " " +
                   tokenTypeName(headerType) + " tokens = " + formatBytes(bytes) +
                   " after the header but the file holds " + formatCount(held) + " (" +
                   formatCount(held - bytes) + " more)");
    tf.llmc = true;
    tf.ttype = headerType;
    tf.offset = kLlmcHeaderBytes;
    tf.count = declared;
  } else {
    tf.ttype = type.value_or(TokenType::U16);
    uint64_t unit = tokenSize(tf.ttype);
    if (size % unit != 0)
      return error("holds " + formatBytes(size) + ", not a whole number of " +
                   tokenTypeName(tf.ttype) + " tokens (" + std::to_string(unit) +
                   " bytes each); the file is truncated or not a " + tokenTypeName(tf.ttype) +
                   " token file");
    tf.count = size / unit;
  }
  tf.file = std::move(file);
  return tf;
}

uint32_t TokenFile::token(uint64_t i) const {
  const uint8_t *p = file->data() + offset;
  if (ttype == TokenType::U16)
    return (uint32_t)p[2 * i] | (uint32_t)p[2 * i + 1] << 8;
  return loadLE32(p + 4 * i);
}

uint64_t TokenFile::numWindows(uint64_t seqLen) const {
  if (seqLen == 0 || count < 2)
    return 0;
  return (count - 1) / seqLen;
}

Status TokenFile::copyWindow(uint64_t index, uint64_t seqLen, DType out, void *inputs,
                             void *targets) const {
  if (out != DType::I64 && out != DType::I32)
    return Status::error(path() + ": token windows can be read as i64 or i32, not " +
                         dtypeName(out));
  uint64_t windows = numWindows(seqLen);
  if (seqLen == 0 || index >= windows)
    return Status::error(path() + ": window " + std::to_string(index) + " of length " +
                         std::to_string(seqLen) + "+1 is out of range; the file's " +
                         formatCount(count) + " tokens hold " + formatCount(windows) +
                         " windows");
  uint64_t first = index * seqLen;
  for (uint64_t t = 0; t <= seqLen; ++t) {
    uint32_t id = token(first + t);
    if (out == DType::I32 && id > (uint32_t)INT32_MAX)
      return Status::error(path() + ": token " + formatCount(first + t) + " is " +
                           std::to_string(id) + ", which does not fit in an i32 input");
    if (t < seqLen) {
      if (out == DType::I64)
        static_cast<int64_t *>(inputs)[t] = id;
      else
        static_cast<int32_t *>(inputs)[t] = (int32_t)id;
    }
    if (t > 0) {
      if (out == DType::I64)
        static_cast<int64_t *>(targets)[t - 1] = id;
      else
        static_cast<int32_t *>(targets)[t - 1] = (int32_t)id;
    }
  }
  return Status::success();
}

} // namespace sinter::rt
