//===- Format.cpp - Small helpers for error messages ----------------------===//

#include "support/Format.h"

#include <cstdio>

namespace sinter::rt {

std::string formatCount(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

std::string formatBytes(uint64_t n) {
  return formatCount(n) + (n == 1 ? " byte" : " bytes");
}

std::string quoteForMessage(std::string_view text, size_t maxLength) {
  std::string out = "'";
  size_t n = text.size() < maxLength ? text.size() : maxLength;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)text[i];
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += (char)c;
    } else if (c >= 0x20 && c < 0x7f) {
      out += (char)c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  out += '\'';
  if (n < text.size())
    out += "...";
  return out;
}

} // namespace sinter::rt
