//===- Safetensors.h - Read and write .safetensors files --------*- C++ -*-===//
//
// The format (huggingface/safetensors): an 8-byte little-endian header
// length N, N bytes of UTF-8 JSON
//   {"__metadata__": {"key": "value", ...},
//    "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
//    ...}
// (padded with spaces), then the data section; offsets are relative to its
// start, and the tensors must cover it exactly, without gaps or overlaps.
// Element types: F64 F32 BF16 F16 I64 I32 BOOL.
//
// Writing is byte-reproducible and readable by the reference library (and
// so by PyTorch and numpy): the header is compact JSON, "__metadata__" first
// (omitted when empty), padded with spaces so the data starts at a multiple
// of 8 bytes. Tensors are ordered by element size, largest first (I64, F64,
// F32, I32, BF16, F16, BOOL, as the reference writer does), then by name
// (bytewise): with the data start 8-aligned, that keeps every tensor aligned
// to its element size, which a pure name order would not (an odd-sized f16
// tensor would misalign every f32 after it) and which the format cannot fix
// with padding, since holes are not allowed. The file is written to a
// temporary file in the same folder, fsynced and renamed (AtomicFile.h).
//
// Checksums: the writer records the CRC-32C (Crc32c.h) of every tensor's
// bytes in "__metadata__", one key per tensor,
//   "sinter.crc32c.<tensor name>": "<8 lowercase hex digits>"
// e.g. "sinter.crc32c.fc1.weight": "e3069283", so that a byte changed on
// disk after writing stops a run instead of resuming it from corrupt
// parameters. The keys are the writer's own: callers cannot pass them, and
// metadata() leaves them out. Checksums are verified where present: files
// written by other tools (PyTorch, numpy) have none and are read as before.
//
// Reading validates everything: the length against the file and a 100 MB
// cap (the reference reader's), the JSON syntax, the keys of every entry,
// the dtypes, that shape x element size equals the offsets' span, that the
// offsets lie in the data section, are ordered, do not overlap and cover it
// exactly, and that no name appears twice. When the file records checksums,
// every tensor must have one, every checksum must name a tensor, and every
// tensor's bytes must match theirs (one pass over the data, at a gigabyte
// or two per second). The data is mapped, not copied.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_CHECKPOINT_SAFETENSORS_H
#define SINTER_RT_CHECKPOINT_SAFETENSORS_H

#include "sinter/rt/DType.h"
#include "sinter/rt/Shape.h"
#include "sinter/rt/Status.h"
#include "support/FileBuffer.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sinter::rt {

/// "F32", "BF16", "BOOL", ...
const char *safetensorsDTypeName(DType t);
std::optional<DType> parseSafetensorsDType(std::string_view name);

/// The "__metadata__" key that holds the checksum of tensor `tensorName`:
/// "sinter.crc32c." followed by the name.
std::string safetensorsChecksumKey(const std::string &tensorName);

struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  uint64_t begin = 0; // offsets into the data section
  uint64_t end = 0;
  uint64_t byteSize() const { return end - begin; }
  /// The CRC-32C the file records for the bytes (verified when read); none
  /// in files from writers other than Sinter's.
  std::optional<uint32_t> crc32c;
};

class SafetensorsFile {
public:
  static constexpr uint64_t kMaxHeaderBytes = 100'000'000;

  static Expected<SafetensorsFile> read(const std::string &path);
  static Expected<SafetensorsFile> parse(std::shared_ptr<const FileBuffer> file);

  /// In data order (ascending offsets).
  const std::vector<SafetensorsEntry> &tensors() const { return entries; }
  /// The entry named `name`, or null.
  const SafetensorsEntry *find(const std::string &name) const;
  /// The entry's bytes (possibly unaligned when another writer made the file).
  const uint8_t *data(const SafetensorsEntry &e) const {
    return file->data() + dataStart + e.begin;
  }
  /// "__metadata__" without the checksums.
  const std::map<std::string, std::string> &metadata() const { return meta; }
  const std::string &path() const { return file->name(); }

private:
  SafetensorsFile() = default;

  std::shared_ptr<const FileBuffer> file;
  uint64_t dataStart = 0;
  std::vector<SafetensorsEntry> entries;
  std::map<std::string, size_t> byName;
  std::map<std::string, std::string> meta;
};

/// One tensor to write; `data` holds numBytes(shape, dtypeSize(dtype)) bytes.
struct SafetensorsTensor {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  const void *data = nullptr;
};

/// The whole file in memory (tests, small files). `metadata` cannot hold
/// keys that start with "sinter.crc32c.": the checksums go there.
Expected<std::vector<uint8_t>>
encodeSafetensors(const std::vector<SafetensorsTensor> &tensors,
                  const std::map<std::string, std::string> &metadata = {});

/// Writes `path` atomically; the tensors' data is streamed, not copied.
Status writeSafetensors(const std::string &path,
                        const std::vector<SafetensorsTensor> &tensors,
                        const std::map<std::string, std::string> &metadata = {});

} // namespace sinter::rt

#endif // SINTER_RT_CHECKPOINT_SAFETENSORS_H
