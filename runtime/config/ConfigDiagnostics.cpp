//===- ConfigDiagnostics.cpp - Source lines and error messages ------------===//
//
// The config text by line (for 1-based columns) and the collected
// `file:line:col: error: message` lines.
//
//===----------------------------------------------------------------------===//

#include "runtime/config/ConfigInternals.h"

#include <algorithm>

namespace sinter::config::detail {

SourceText::SourceText(const std::string &text) {
  size_t start = 0;
  for (;;) {
    size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl == std::string::npos ? nl : nl - start));
    if (nl == std::string::npos)
      break;
    start = nl + 1;
  }
}

const std::string &SourceText::line(int i) const {
  static const std::string empty;
  return i >= 0 && i < (int)lines.size() ? lines[i] : empty;
}

int SourceText::column(int line0, int tokenizerColumn) const {
  const std::string &l = line(line0);
  int visual = 0;
  for (size_t i = 0; i < l.size(); ++i) {
    if (visual >= tokenizerColumn)
      return (int)i + 1;
    visual = l[i] == '\t' ? visual + 8 - visual % 8 : visual + 1;
  }
  return (int)l.size() + 1 + std::max(0, tokenizerColumn - visual);
}

void Diagnostics::error(int line0, int column0, const std::string &message) {
  int column1 = line0 < 0 ? -1 : source ? source->column(line0, column0) : column0 + 1;
  errorAtColumn(line0, column1, message);
}

std::string Diagnostics::take() {
  // Unlocated messages (line -1) keep their order, after the located ones.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    if ((a.line < 0) != (b.line < 0))
      return b.line < 0;
    return std::pair(a.line, a.column) < std::pair(b.line, b.column);
  });
  std::string text;
  for (const Entry &e : entries) {
    std::string prefix = displayPath;
    if (!prefix.empty() && e.line >= 0)
      prefix += ":" + std::to_string(e.line + 1) + ":" + std::to_string(e.column);
    text += (text.empty() ? "" : "\n") + (prefix.empty() ? "" : prefix + ": ") +
            "error: " + e.message;
  }
  entries.clear();
  return text;
}

} // namespace sinter::config::detail
