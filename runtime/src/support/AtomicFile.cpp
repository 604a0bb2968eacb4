//===- AtomicFile.cpp - Write a file so readers never see half of it ------===//

#include "support/AtomicFile.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sinter::rt {
namespace {

std::string folderOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string baseOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// The process that writes the temporary file `name` (".BASE.tmp.PID.N"),
/// or 0 if `name` is not one.
long writerOf(const std::string &name) {
  size_t tmp = name.rfind(".tmp.");
  if (name.empty() || name[0] != '.' || tmp == std::string::npos || tmp == 0)
    return 0;
  const char *pid = name.c_str() + tmp + 5;
  char *end = nullptr;
  long writer = std::strtol(pid, &end, 10);
  if (end == pid || *end != '.' || writer <= 0)
    return 0;
  const char *counter = end + 1;
  std::strtoull(counter, &end, 10);
  return end != counter && *end == '\0' ? writer : 0;
}

bool processIsGone(long pid) { return ::kill(pid_t(pid), 0) != 0 && errno == ESRCH; }

} // namespace

Expected<std::vector<StaleTemporary>> removeStaleTemporaries(const std::string &folder) {
  std::vector<StaleTemporary> removed;
  DIR *dir = ::opendir(folder.c_str());
  if (!dir)
    return errno == ENOENT ? Expected<std::vector<StaleTemporary>>(removed)
                           : Status::error("'" + folder + "': cannot list it: " +
                                           std::strerror(errno));
  while (dirent *entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    long writer = writerOf(name);
    if (!writer || !processIsGone(writer))
      continue;
    std::string path = folder + "/" + name;
    struct stat st;
    uint64_t bytes = ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
    if (::unlink(path.c_str()) == 0)
      removed.push_back({name, bytes});
  }
  ::closedir(dir);
  return removed;
}

Status createDirectories(const std::string &path, const std::string &what) {
  for (size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/')
      continue;
    std::string prefix = path.substr(0, at);
    if (mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      return Status::error(what + " '" + path + "': cannot create '" + prefix +
                           "': " + std::strerror(errno));
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::error(what + " '" + path + "' is not a folder");
  return Status::success();
}

Expected<AtomicFileWriter> AtomicFileWriter::create(const std::string &path) {
  if (path.empty() || path.back() == '/')
    return Status::error("'" + path + "': not a file name; expected a path such as dir/file.safetensors");
  // A hidden name unique to this process and call; O_EXCL refuses to reuse a
  // leftover. Mode 0666 lets the umask decide, as for any new file.
  static std::atomic<uint64_t> counter{0};
  std::string folder = folderOf(path);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string temp = folder + "/." + baseOf(path) + ".tmp." +
                       std::to_string((long)::getpid()) + "." +
                       std::to_string(counter.fetch_add(1));
    int fd;
    do {
      fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    } while (fd < 0 && errno == EINTR);
    if (fd >= 0)
      return AtomicFileWriter(path, temp, fd);
    if (errno != EEXIST)
      return Status::error(path + ": cannot create a temporary file in '" + folder +
                           "': " + std::strerror(errno));
  }
  return Status::error(path + ": cannot create a temporary file in '" + folder +
                       "': every candidate name exists");
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter &&other) noexcept
    : path(std::move(other.path)), temp(std::move(other.temp)), fd(other.fd),
      committed(other.committed) {
  other.fd = -1;
  other.committed = true; // the moved-from writer owns nothing to discard
}

AtomicFileWriter::~AtomicFileWriter() {
  if (!committed)
    discard();
}

void AtomicFileWriter::discard() {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
  if (!temp.empty())
    ::unlink(temp.c_str());
  committed = true;
}

Status AtomicFileWriter::write(const void *data, size_t size) {
  if (fd < 0)
    return Status::error(path + ": internal error: write after commit");
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    // Linux writes at most about 2 GiB per call; larger pieces loop.
    size_t chunk = size < (size_t(1) << 30) ? size : (size_t(1) << 30);
    ssize_t n = ::write(fd, p, chunk);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return Status::error(path + ": cannot write '" + temp + "': " + std::strerror(errno));
    }
    p += n;
    size -= (size_t)n;
  }
  return Status::success();
}

Status AtomicFileWriter::commit() {
  if (fd < 0)
    return Status::error(path + ": internal error: commit twice");
  if (::fsync(fd) != 0) {
    Status s = Status::error(path + ": cannot flush '" + temp + "' to disk: " + std::strerror(errno));
    discard();
    return s;
  }
  int rc = ::close(fd);
  fd = -1;
  if (rc != 0) {
    Status s = Status::error(path + ": cannot close '" + temp + "': " + std::strerror(errno));
    discard();
    return s;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    Status s = Status::error(path + ": cannot rename '" + temp + "' over it: " + std::strerror(errno));
    discard();
    return s;
  }
  committed = true;
  // Persist the rename itself. Some file systems refuse fsync on a folder;
  // the data is already safe then, so that is not an error.
  int dir = ::open(folderOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
  return Status::success();
}

Status writeFileAtomically(const std::string &path, const void *data, size_t size) {
  Expected<AtomicFileWriter> w = AtomicFileWriter::create(path);
  if (!w.ok())
    return w.status();
  SINTER_RT_RETURN_IF_ERROR(w->write(data, size));
  return w->commit();
}

} // namespace sinter::rt
