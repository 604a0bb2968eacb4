//===- FileBuffer.h - A whole file's bytes, read-only -----------*- C++ -*-===//
//
// Readers take their input as a FileBuffer so they work the same on a mapped
// file and on bytes in memory (tests, the fuzzer).
//
// Files are mapped (mmap, read-only) rather than read: data sets and
// checkpoints can be many GiB, a mapping costs no start-up time and no
// private memory, the page cache is shared by every rank of a node that
// reads the same file, and the prefetcher touches only the rows it gathers.
// The price is that a file truncated by someone else while mapped raises
// SIGBUS on access; sizes are checked at open time, and the runtime never
// writes a file it has mapped (checkpoints are replaced by rename).
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_SUPPORT_FILEBUFFER_H
#define SINTER_RT_SUPPORT_FILEBUFFER_H

#include "sinter/rt/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sinter::rt {

class FileBuffer {
public:
  /// Maps the regular file at `path`; messages name `path`.
  static Expected<std::shared_ptr<const FileBuffer>> open(const std::string &path);
  /// Wraps bytes already in memory; `name` stands for the path in messages.
  static std::shared_ptr<const FileBuffer> fromBytes(std::vector<uint8_t> bytes,
                                                     std::string name);

  FileBuffer(const FileBuffer &) = delete;
  FileBuffer &operator=(const FileBuffer &) = delete;
  ~FileBuffer();

  const uint8_t *data() const { return bytes; }
  uint64_t size() const { return length; }
  /// The path (or the name given to fromBytes), for messages.
  const std::string &name() const { return path; }

private:
  FileBuffer() = default;

  const uint8_t *bytes = nullptr;
  uint64_t length = 0;
  std::string path;
  void *mapping = nullptr; // non-null when bytes come from mmap
  std::vector<uint8_t> owned;
};

} // namespace sinter::rt

#endif // SINTER_RT_SUPPORT_FILEBUFFER_H
