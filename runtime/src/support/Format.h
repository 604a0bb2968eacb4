//===- Format.h - Small helpers for error messages --------------*- C++ -*-===//

#ifndef SINTER_RT_SUPPORT_FORMAT_H
#define SINTER_RT_SUPPORT_FORMAT_H

#include <cstdint>
#include <string>
#include <string_view>

namespace sinter::rt {

/// 460032 -> "460,032": byte counts in messages are read by people.
std::string formatCount(uint64_t n);

/// `text` quoted for a message: printable ASCII as is, other bytes as \xNN,
/// cut after `maxLength` bytes with "..." so a hostile file cannot flood the
/// terminal.
std::string quoteForMessage(std::string_view text, size_t maxLength = 80);

/// "1 byte", "2 bytes", with formatCount.
std::string formatBytes(uint64_t n);

/// 1572864 -> "1.5 MiB": memory sizes, to a tenth of a MiB.
std::string formatMiB(uint64_t bytes);

} // namespace sinter::rt

#endif // SINTER_RT_SUPPORT_FORMAT_H
