//===- AtomicFile_test.cpp - Temporary file, fsync, rename ----------------===//

#include "support/AtomicFile.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

// A writer killed mid-write leaves its temporary file; the next run removes
// it, and only it: a live process's file (this one's) stays.
TEST(AtomicFile, RemovesTemporariesOfDeadWriters) {
  TempDir dir;
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0)
    std::_Exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child); // its pid now names no process
  std::string dead = ".step_2.safetensors.tmp." + std::to_string(child) + ".0";
  writeBytes(dir.file(dead), bytesOf("half a checkpoint"));
  Expected<AtomicFileWriter> live = AtomicFileWriter::create(dir.file("step_3.safetensors"));
  ASSERT_TRUE(live.ok()) << live.message();
  writeBytes(dir.file("step_1.safetensors"), bytesOf("complete"));
  writeBytes(dir.file(".notes.tmp.x"), bytesOf("not a writer's"));

  Expected<std::vector<StaleTemporary>> removed = removeStaleTemporaries(dir.path());
  ASSERT_TRUE(removed.ok()) << removed.message();
  ASSERT_EQ(removed->size(), 1u);
  EXPECT_EQ((*removed)[0].name, dead);
  EXPECT_EQ((*removed)[0].bytes, 17u);
  EXPECT_FALSE(exists(dir.file(dead)));
  EXPECT_TRUE(exists(live->tempPath()));
  EXPECT_TRUE(exists(dir.file("step_1.safetensors")));
  EXPECT_TRUE(exists(dir.file(".notes.tmp.x")));
}

TEST(AtomicFile, NoStaleTemporariesInAMissingFolder) {
  Expected<std::vector<StaleTemporary>> removed = removeStaleTemporaries("/nonexistent/ck");
  ASSERT_TRUE(removed.ok()) << removed.message();
  EXPECT_TRUE(removed->empty());
}
