//===- ReaderFuzzer.cpp - libFuzzer target for the runtime's file readers -===//
//
// Every input goes through all three readers (.npy, token file in both
// widths, safetensors): each must accept it or reject it with a message that
// names the file, never crash, hang or read outside the input. Accepted
// inputs are read in full (so ASan sees any out-of-range view), and written
// back and re-read, which must give the same header. Built with
// -fsanitize=fuzzer,address,undefined (SINTER_ENABLE_FUZZ) and run by
// scripts/fuzz.sh.
//
//===----------------------------------------------------------------------===//

#include "checkpoint/Safetensors.h"
#include "data/Npy.h"
#include "data/TokenFile.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

using namespace sinter::rt;

namespace {

const std::string kName = "fuzz.input";

/// Fails loudly (libFuzzer records a crash) when `cond` is false.
void require(bool cond) {
  if (!cond)
    __builtin_trap();
}

void checkMessage(const Status &s) {
  if (!s.ok())
    require(s.message().rfind(kName + ": ", 0) == 0);
}

volatile uint8_t sink;

void touch(const uint8_t *p, uint64_t n) {
  uint8_t acc = 0;
  for (uint64_t i = 0; i < n; ++i)
    acc ^= p[i];
  sink = acc;
}

void fuzzNpy(const std::shared_ptr<const FileBuffer> &file) {
  Expected<NpyArray> a = NpyArray::parse(file);
  checkMessage(a.status());
  if (!a.ok())
    return;
  touch(a->data(), a->byteSize());
  Expected<std::vector<uint8_t>> again = encodeNpy(a->dtype(), a->shape(), a->data());
  require(again.ok());
  Expected<NpyArray> b = NpyArray::parse(FileBuffer::fromBytes(again.take(), kName));
  require(b.ok() && b->dtype() == a->dtype() && b->shape() == a->shape() &&
          b->byteSize() == a->byteSize());
}

void fuzzTokens(const std::shared_ptr<const FileBuffer> &file, std::optional<TokenType> type) {
  Expected<TokenFile> t = TokenFile::parse(file, type);
  checkMessage(t.status());
  if (!t.ok() || t->numTokens() == 0)
    return;
  uint32_t acc = t->token(0) ^ t->token(t->numTokens() - 1);
  sink = (uint8_t)acc;
  for (uint64_t seqLen : {1, 3, 64}) {
    uint64_t windows = t->numWindows(seqLen);
    if (windows == 0)
      continue;
    std::vector<int64_t> in(seqLen), tgt(seqLen);
    require(t->copyWindow(windows - 1, seqLen, DType::I64, in.data(), tgt.data()).ok());
    std::vector<int32_t> in32(seqLen), tgt32(seqLen);
    checkMessage(t->copyWindow(0, seqLen, DType::I32, in32.data(), tgt32.data()));
    require(!t->copyWindow(windows, seqLen, DType::I64, in.data(), tgt.data()).ok());
  }
}

void fuzzSafetensors(const std::shared_ptr<const FileBuffer> &file) {
  Expected<SafetensorsFile> f = SafetensorsFile::parse(file);
  checkMessage(f.status());
  if (!f.ok())
    return;
  std::vector<SafetensorsTensor> tensors;
  for (const SafetensorsEntry &e : f->tensors()) {
    touch(f->data(e), e.byteSize());
    require(f->find(e.name) == &e);
    tensors.push_back({e.name, e.dtype, e.shape, f->data(e)});
  }
  Expected<std::vector<uint8_t>> again = encodeSafetensors(tensors, f->metadata());
  require(again.ok());
  Expected<SafetensorsFile> g = SafetensorsFile::parse(FileBuffer::fromBytes(again.take(), kName));
  require(g.ok() && g->tensors().size() == f->tensors().size() && g->metadata() == f->metadata());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1 << 20))
    return 0;
  std::shared_ptr<const FileBuffer> file =
      FileBuffer::fromBytes(std::vector<uint8_t>(data, data + size), kName);
  fuzzNpy(file);
  fuzzTokens(file, std::nullopt);
  fuzzTokens(file, TokenType::U32);
  fuzzSafetensors(file);
  return 0;
}
