//===- FileBuffer.cpp - A whole file's bytes, read-only -------------------===//

#include "support/FileBuffer.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sinter::rt {

Expected<std::shared_ptr<const FileBuffer>>
FileBuffer::open(const std::string &path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0)
    return Status::error(path + ": cannot open the file: " + std::strerror(errno));

  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int e = errno;
    ::close(fd);
    return Status::error(path + ": cannot read the file's size: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(path + ": " +
                         (S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file") +
                         "; expected a data file");
  }

  std::shared_ptr<FileBuffer> buf(new FileBuffer());
  buf->path = path;
  buf->length = (uint64_t)st.st_size;
  if (buf->length == 0) {
    // mmap rejects empty ranges; an empty file is simply zero bytes.
    ::close(fd);
    static const uint8_t empty = 0;
    buf->bytes = &empty;
    return std::shared_ptr<const FileBuffer>(std::move(buf));
  }
  void *m = ::mmap(nullptr, (size_t)buf->length, PROT_READ, MAP_PRIVATE, fd, 0);
  int e = errno;
  ::close(fd); // the mapping keeps the file alive
  if (m == MAP_FAILED)
    return Status::error(path + ": cannot map the file into memory: " + std::strerror(e));
  buf->mapping = m;
  buf->bytes = static_cast<const uint8_t *>(m);
  return std::shared_ptr<const FileBuffer>(std::move(buf));
}

std::shared_ptr<const FileBuffer> FileBuffer::fromBytes(std::vector<uint8_t> bytes,
                                                        std::string name) {
  std::shared_ptr<FileBuffer> buf(new FileBuffer());
  buf->owned = std::move(bytes);
  buf->bytes = buf->owned.data();
  buf->length = buf->owned.size();
  buf->path = std::move(name);
  return buf;
}

FileBuffer::~FileBuffer() {
  if (mapping)
    ::munmap(mapping, (size_t)length);
}

} // namespace sinter::rt
