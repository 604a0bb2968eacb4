//===- ReaderCorpus_test.cpp - Replay the fuzz corpus ---------------------===//
//
// Every file in test/Runtime/corpus (fuzzing seeds and inputs that once
// crashed a reader) goes through all three readers, as in ReaderFuzzer.cpp;
// each must be accepted or rejected with a message, never crash. The same
// corpus is replayed under ASan and UBSan by scripts/fuzz.sh --replay.

#include "checkpoint/Safetensors.h"
#include "data/Npy.h"
#include "data/TokenFile.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace sinter::rt;
using namespace sinter::rt::test;

TEST(ReaderCorpus, EveryInputIsAcceptedOrRejected) {
  std::string dir = std::string(SINTER_RUNTIME_TEST_DIR) + "/corpus";
  std::vector<std::string> names = listDir(dir);
  ASSERT_GT(names.size(), 10u) << "corpus missing: " << dir;
  size_t accepted = 0;
  for (const std::string &name : names) {
    auto file = FileBuffer::fromBytes(readBytes(dir + "/" + name), name);
    Expected<NpyArray> npy = NpyArray::parse(file);
    Expected<SafetensorsFile> st = SafetensorsFile::parse(file);
    Expected<TokenFile> tokens = TokenFile::parse(file);
    Expected<TokenFile> tokens32 = TokenFile::parse(file, TokenType::U32);
    for (const Status *s : {&npy.status(), &st.status(), &tokens.status(), &tokens32.status()}) {
      if (!s->ok()) {
        EXPECT_EQ(s->message().rfind(name + ": ", 0), 0u) << "messages name the file: " << s->message();
      }
    }
    accepted += npy.ok() + st.ok();
    if (npy.ok() && npy->byteSize()) {
      EXPECT_LE(npy->data() + npy->byteSize(), file->data() + file->size());
    }
    if (st.ok()) {
      for (const SafetensorsEntry &e : st->tensors()) {
        EXPECT_LE(st->data(e) + e.byteSize(), file->data() + file->size());
      }
    }
  }
  EXPECT_GT(accepted, 0u) << "the corpus holds valid seeds too";
}
