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

std::string formatMiB(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / (1 << 20));
  return text;
}

std::string quoteForMessage(std::string_view text, size_t maxLength) {
  // Python's repr convention: single quotes unless the text holds one and
  // no double quote, so a .npy header reads naturally.
  size_t n = text.size() < maxLength ? text.size() : maxLength;
  std::string_view shown = text.substr(0, n);
  char quote = shown.find('\'') != std::string_view::npos &&
                       shown.find('"') == std::string_view::npos
                   ? '"'
                   : '\'';
  std::string out(1, quote);
  for (char ch : shown) {
    unsigned char c = (unsigned char)ch;
    if (c == '\\' || c == (unsigned char)quote) {
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
  out += quote;
  if (n < text.size())
    out += "...";
  return out;
}

} // namespace sinter::rt
