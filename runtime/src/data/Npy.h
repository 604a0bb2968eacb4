//===- Npy.h - Read and write numpy .npy files ------------------*- C++ -*-===//
//
// The .npy format, versions 1.0, 2.0 and 3.0 (numpy's format.py): the magic
// "\x93NUMPY", two version bytes, the header length (2 bytes little-endian
// in 1.0, 4 bytes in 2.0 and 3.0), a Python dict literal with exactly the
// keys 'descr', 'fortran_order' and 'shape', then the data in C order.
//
// Element types (descr):
//   '<f8' f64, '<f4' f32, '<f2' f16, '<i8' i64, '<i4' i32, '|b1' bool,
//   'bfloat16' bf16.
// bf16 needs a word: numpy has no bfloat16, and np.save of an ml_dtypes
// bfloat16 array writes descr '<V2', which is also how any 2-byte void or
// structured type is written, so '<V2' is rejected as ambiguous. Sinter
// writes and accepts the descr 'bfloat16' instead; numpy reads such a file
// back when ml_dtypes is imported (np.dtype('bfloat16') then resolves).
// Big-endian data and fortran_order=True are rejected with a message that
// says how to convert the array.
//
// Reading checks everything: the header must parse and hold exactly the three
// keys, sizes are computed without overflow, and the data must be exactly
// shape x itemsize bytes (a shorter file is "truncated", a longer one has
// "trailing bytes"). The data is not copied: an NpyArray keeps the mapped
// file alive (see FileBuffer.h for why files are mapped). The data is
// aligned as the file has it: numpy aligns it to 64 bytes, other writers may
// not, so use memcpy (or gatherRows) rather than typed pointers.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_DATA_NPY_H
#define SINTER_RT_DATA_NPY_H

#include "sinter/rt/DType.h"
#include "sinter/rt/Shape.h"
#include "sinter/rt/Status.h"
#include "support/AtomicFile.h"
#include "support/FileBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace sinter::rt {

class NpyArray {
public:
  /// Maps and checks the file at `path`.
  static Expected<NpyArray> read(const std::string &path);
  /// Checks bytes already in a FileBuffer (its name is used in messages).
  static Expected<NpyArray> parse(std::shared_ptr<const FileBuffer> file);

  DType dtype() const { return type; }
  const Shape &shape() const { return dims; }
  uint64_t numElements() const { return elements; }
  /// The C-order element data (possibly unaligned).
  const uint8_t *data() const { return file->data() + offset; }
  uint64_t byteSize() const { return bytes; }
  /// Format version the file declared: 1, 2 or 3 (minor is always 0).
  int formatVersion() const { return version; }
  const std::string &path() const { return file->name(); }

private:
  NpyArray() = default;

  std::shared_ptr<const FileBuffer> file;
  DType type = DType::F32;
  Shape dims;
  uint64_t elements = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  int version = 1;
};

/// The .npy descr for `t` ("<f4", "|b1", "bfloat16", ...).
const char *npyDescr(DType t);

/// The complete file: header then `numBytes(shape, dtypeSize(t))` bytes from
/// `data`, formatted exactly as numpy's np.save does (version 1.0, or 2.0
/// when the header does not fit in 65,535 bytes). Fails on size overflow.
Expected<std::vector<uint8_t>> encodeNpy(DType t, const Shape &shape, const void *data);

/// Writes `path` atomically (temporary file, fsync, rename).
Status writeNpy(const std::string &path, DType t, const Shape &shape, const void *data);

/// An .npy file written as its data arrives, for arrays larger than one
/// wants in memory at once: the header for `shape`, then append() until
/// every byte is in, then commit() (atomic, as writeNpy). A writer not
/// committed leaves no file.
class NpyWriter {
public:
  static Expected<NpyWriter> create(const std::string &path, DType t, const Shape &shape);
  Status append(const void *data, size_t size);
  /// Fails unless exactly the shape's bytes were appended.
  Status commit();

private:
  NpyWriter(std::string path, AtomicFileWriter file, uint64_t bytes)
      : path(std::move(path)), file(std::move(file)), expected(bytes) {}
  std::string path;
  AtomicFileWriter file;
  uint64_t expected = 0, written = 0;
};

} // namespace sinter::rt

#endif // SINTER_RT_DATA_NPY_H
