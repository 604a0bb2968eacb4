//===- AtomicFile_test.cpp - Temporary file, fsync, rename ----------------===//

#include "support/AtomicFile.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

using namespace sinter::rt;
using namespace sinter::rt::test;

namespace {
bool exists(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}
} // namespace

TEST(AtomicFile, WritesAndReplaces) {
  TempDir dir;
  std::string path = dir.file("ckpt.bin");
  ASSERT_TRUE(writeFileAtomically(path, "old", 3).ok());
  EXPECT_EQ(readBytes(path), bytesOf("old"));
  ASSERT_TRUE(writeFileAtomically(path, "newer", 5).ok());
  EXPECT_EQ(readBytes(path), bytesOf("newer"));
  EXPECT_EQ(listDir(dir.path()), std::vector<std::string>{"ckpt.bin"}) << "no temporary left";
}

TEST(AtomicFile, OldContentUntilCommit) {
  TempDir dir;
  std::string path = dir.file("c.bin");
  ASSERT_TRUE(writeFileAtomically(path, "old", 3).ok());
  std::string temp;
  {
    Expected<AtomicFileWriter> w = AtomicFileWriter::create(path);
    ASSERT_TRUE(w.ok()) << w.message();
    ASSERT_TRUE(w->write("half", 4).ok());
    temp = w->tempPath();
    EXPECT_TRUE(exists(temp));
    EXPECT_EQ(readBytes(path), bytesOf("old")) << "readers still see the old file";
  } // dropped without commit
  EXPECT_FALSE(exists(temp)) << "the temporary is removed";
  EXPECT_EQ(readBytes(path), bytesOf("old"));
}

TEST(AtomicFile, MissingFolder) {
  TempDir dir;
  Status s = writeFileAtomically(dir.file("no/such/x.bin"), "x", 1);
  EXPECT_EQ(s.message(), dir.file("no/such/x.bin") + ": cannot create a temporary file in '" +
                             dir.file("no/such") + "': No such file or directory");
}
