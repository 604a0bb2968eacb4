//===- Crc32c.h - CRC-32C (Castagnoli) of a byte range ----------*- C++ -*-===//
//
// Checkpoints record one per tensor so that a byte changed on disk is
// noticed when the file is read (Safetensors.h). CRC-32C rather than the
// zlib CRC-32: it detects more error patterns in long messages, and is the
// checksum of iSCSI, ext4 and Btrfs. Table-driven, eight bytes per step
// ("slicing by 8"), portable C++: about a gigabyte or more per second, the
// order of a disk's read speed.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_SUPPORT_CRC32C_H
#define SINTER_RT_SUPPORT_CRC32C_H

#include <cstddef>
#include <cstdint>

namespace sinter::rt {

/// The CRC-32C of `n` bytes at `data`, continuing from `crc`, the CRC-32C of
/// the bytes before them (0 to start): crc32c(b, nb, crc32c(a, na)) is the
/// CRC-32C of a followed by b. crc32c("123456789", 9) == 0xE3069283.
uint32_t crc32c(const void *data, size_t n, uint32_t crc = 0);

} // namespace sinter::rt

#endif // SINTER_RT_SUPPORT_CRC32C_H
