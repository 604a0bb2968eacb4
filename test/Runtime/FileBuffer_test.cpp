//===- FileBuffer_test.cpp - Mapped files ---------------------------------===//

#include "support/FileBuffer.h"

#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace sinter::rt;
using namespace sinter::rt::test;

TEST(FileBuffer, MapsTheFile) {
  TempDir dir;
  writeBytes(dir.file("a.bin"), {1, 2, 3});
  Expected<std::shared_ptr<const FileBuffer>> f = FileBuffer::open(dir.file("a.bin"));
  ASSERT_TRUE(f.ok()) << f.message();
  ASSERT_EQ((*f)->size(), 3u);
  EXPECT_EQ((*f)->data()[2], 3);
  EXPECT_EQ((*f)->name(), dir.file("a.bin"));
}

TEST(FileBuffer, EmptyFile) {
  TempDir dir;
  writeBytes(dir.file("e.bin"), {});
  Expected<std::shared_ptr<const FileBuffer>> f = FileBuffer::open(dir.file("e.bin"));
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ((*f)->size(), 0u);
}

TEST(FileBuffer, Errors) {
  TempDir dir;
  Expected<std::shared_ptr<const FileBuffer>> missing = FileBuffer::open(dir.file("nope.npy"));
  EXPECT_EQ(missing.message(), dir.file("nope.npy") + ": cannot open the file: No such file or directory");
  Expected<std::shared_ptr<const FileBuffer>> folder = FileBuffer::open(dir.path());
  EXPECT_EQ(folder.message(), dir.path() + ": is a directory; expected a data file");
}

TEST(FileBuffer, FromBytes) {
  std::shared_ptr<const FileBuffer> f = FileBuffer::fromBytes({9, 8}, "mem.npy");
  EXPECT_EQ(f->size(), 2u);
  EXPECT_EQ(f->data()[0], 9);
  EXPECT_EQ(f->name(), "mem.npy");
}
