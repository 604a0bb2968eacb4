//===- TokenFile.h - Flat files of token ids --------------------*- C++ -*-===//
//
// Two layouts, both little-endian:
//  - nanoGPT: no header, the whole file is uint16 (or uint32) token ids, as
//    written by `np.array(ids, dtype=np.uint16).tofile(path)`.
//  - llm.c: a header of 256 int32: [0] the magic 20240520, [1] the version
//    (1: uint16 tokens, 2: uint32 tokens), [2] the number of tokens, the
//    rest zero; then the tokens.
// The llm.c layout is recognised by its magic. A raw file could in principle
// begin with the same 4 bytes (uint16 tokens 55432, 308, or the uint32 token
// 20240520); no vocabulary in use is that large for uint32, and with GPT-2's
// 50,257 tokens the uint16 pair cannot occur, so the rule is safe in
// practice and documented here.
//
// A window is T+1 consecutive tokens; sample i of a sequence length T is the
// window starting at token i*T: its first T tokens are the inputs (idx) and
// its last T the targets, shifted by one, as in llm.c's loader. Consecutive
// windows share one token, so a file of n tokens holds (n-1)/T windows.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_DATA_TOKENFILE_H
#define SINTER_RT_DATA_TOKENFILE_H

#include "sinter/rt/DType.h"
#include "sinter/rt/Status.h"
#include "support/FileBuffer.h"

#include <memory>
#include <optional>
#include <string>

namespace sinter::rt {

enum class TokenType { U16, U32 };

class TokenFile {
public:
  static constexpr int32_t kLlmcMagic = 20240520;
  static constexpr uint64_t kLlmcHeaderBytes = 256 * 4;

  /// Maps and checks `path`. `type` is the config's data.train.tokens.dtype
  /// when the user set one: a raw file is read with it (uint16 when unset),
  /// an llm.c file must agree with it (its header decides when unset).
  static Expected<TokenFile> open(const std::string &path,
                                  std::optional<TokenType> type = std::nullopt);
  static Expected<TokenFile> parse(std::shared_ptr<const FileBuffer> file,
                                   std::optional<TokenType> type = std::nullopt);

  TokenType tokenType() const { return ttype; }
  bool hasLlmcHeader() const { return llmc; }
  uint64_t numTokens() const { return count; }
  const std::string &path() const { return file->name(); }

  /// Token `i` (i < numTokens()).
  uint32_t token(uint64_t i) const;
  /// Windows of T+1 tokens: (numTokens() - 1) / T, 0 when the file is too
  /// short for one; T must be >= 1.
  uint64_t numWindows(uint64_t seqLen) const;
  /// Writes window `index`'s T inputs to `inputs` and T targets to `targets`
  /// as `out` (I64 or I32), checking the index and, for I32, that the ids
  /// fit.
  Status copyWindow(uint64_t index, uint64_t seqLen, DType out, void *inputs,
                    void *targets) const;

private:
  TokenFile() = default;

  std::shared_ptr<const FileBuffer> file;
  TokenType ttype = TokenType::U16;
  bool llmc = false;
  uint64_t offset = 0;
  uint64_t count = 0;
};

const char *tokenTypeName(TokenType t); // "uint16" / "uint32"
inline uint64_t tokenSize(TokenType t) { return t == TokenType::U16 ? 2 : 4; }

} // namespace sinter::rt

#endif // SINTER_RT_DATA_TOKENFILE_H
