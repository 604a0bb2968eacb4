//===- AtomicFile.h - Write a file so readers never see half of it -*- C++ -*-===//
//
// The bytes go to a new temporary file in the destination's folder (same file
// system, so rename is atomic), which is fsynced, renamed over the
// destination, and the folder fsynced so the rename survives a crash. A
// reader, or a run resumed after a crash, sees the old file or the new one,
// never a mixture. Dropping the writer without commit() removes the
// temporary file.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_SUPPORT_ATOMICFILE_H
#define SINTER_RT_SUPPORT_ATOMICFILE_H

#include "sinter/rt/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sinter::rt {

/// Creates the folder `path` and its missing parents (`mkdir -p`); the
/// error names `what` (a flag or a config field) and the path.
Status createDirectories(const std::string &path, const std::string &what);

class AtomicFileWriter {
public:
  /// Creates the temporary file next to `path`.
  static Expected<AtomicFileWriter> create(const std::string &path);

  AtomicFileWriter(AtomicFileWriter &&other) noexcept;
  AtomicFileWriter &operator=(AtomicFileWriter &&) = delete;
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  ~AtomicFileWriter();

  /// Appends `size` bytes (handles short writes and EINTR).
  Status write(const void *data, size_t size);
  /// fsync, close, rename over the destination, fsync the folder.
  Status commit();

  const std::string &tempPath() const { return temp; }

private:
  AtomicFileWriter(std::string path, std::string temp, int fd)
      : path(std::move(path)), temp(std::move(temp)), fd(fd) {}
  void discard();

  std::string path;
  std::string temp;
  int fd = -1;
  bool committed = false;
};

/// A temporary file that a writer left behind when its process died.
struct StaleTemporary {
  std::string name; ///< within the folder
  uint64_t bytes = 0;
};

/// Removes the temporary files of AtomicFileWriter in `folder` whose
/// process is gone (killed mid-write); returns what it removed. Files of
/// live processes, this one included, are left alone.
Expected<std::vector<StaleTemporary>> removeStaleTemporaries(const std::string &folder);

/// Writes `size` bytes as the whole content of `path`, atomically.
Status writeFileAtomically(const std::string &path, const void *data, size_t size);

} // namespace sinter::rt

#endif // SINTER_RT_SUPPORT_ATOMICFILE_H
