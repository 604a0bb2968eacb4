//===- TestUtil.h - Helpers shared by the runtime's tests -------*- C++ -*-===//

#ifndef SINTER_TEST_RUNTIME_TESTUTIL_H
#define SINTER_TEST_RUNTIME_TESTUTIL_H

#include <cstdint>
#include <string>
#include <vector>

namespace sinter::rt::test {

/// A fresh folder under $TMPDIR (or /tmp), removed with its files when the
/// object goes away.
class TempDir {
public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return dir; }
  std::string file(const std::string &name) const { return dir + "/" + name; }

private:
  std::string dir;
};

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes);
std::vector<uint8_t> readBytes(const std::string &path);
std::vector<uint8_t> bytesOf(const std::string &text);
/// Names of the regular files in `dir`, sorted.
std::vector<std::string> listDir(const std::string &dir);

/// A TCP port on the loopback interface that nothing listens on now.
int freeLoopbackPort();

/// `values` as little-endian bytes.
template <typename T> std::vector<uint8_t> asBytes(const std::vector<T> &values) {
  const uint8_t *p = reinterpret_cast<const uint8_t *>(values.data());
  return std::vector<uint8_t>(p, p + values.size() * sizeof(T));
}

} // namespace sinter::rt::test

#endif
