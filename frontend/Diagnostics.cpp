//===- Diagnostics.cpp - Source files and user-facing error reporting -----===//

#include "frontend/Diagnostics.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

namespace sinter {

SourceManager::SourceManager() { files_.push_back({"sinterc", ""}); }

uint32_t SourceManager::addBuffer(std::string path, std::string text) {
  files_.push_back({std::move(path), std::move(text)});
  return files_.size() - 1;
}

uint32_t SourceManager::addFile(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return 0;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    error = "cannot read '" + path + "'";
    return 0;
  }
  return addBuffer(path, ss.str());
}

std::string SourceManager::lineText(Loc loc) const {
  if (!loc.valid() || loc.file >= files_.size())
    return "";
  const std::string &text = files_[loc.file].text;
  size_t pos = 0;
  for (uint32_t line = 1; line < loc.line && pos != std::string::npos; ++line) {
    pos = text.find('\n', pos);
    if (pos != std::string::npos)
      ++pos;
  }
  if (pos == std::string::npos || pos > text.size())
    return "";
  size_t end = text.find('\n', pos);
  std::string line = text.substr(pos, end == std::string::npos ? end : end - pos);
  if (!line.empty() && line.back() == '\r')
    line.pop_back();
  return line;
}

DiagnosticEngine::DiagnosticEngine(const SourceManager &sources)
    : sources_(sources), os_(&std::cerr) {}

std::string DiagnosticEngine::where(Loc loc) const {
  if (!loc.valid())
    return sources_.path(0);
  return sources_.path(loc.file) + ":" + std::to_string(loc.line) + ":" +
         std::to_string(loc.col);
}

void DiagnosticEngine::report(Loc loc, Severity severity,
                              const std::string &message) {
  static const char *const names[] = {"error", "warning", "note"};
  if (severity == Severity::Error)
    ++errors_;
  std::ostream &os = *os_;
  os << where(loc) << ": " << names[int(severity)] << ": " << message << "\n";
  if (!loc.valid())
    return;
  std::string line = sources_.lineText(loc);
  os << line << "\n";
  // Keep tabs so the caret lines up under the column in a terminal.
  std::string caret;
  for (uint32_t i = 1; i < loc.col && i <= line.size(); ++i)
    caret += line[i - 1] == '\t' ? '\t' : ' ';
  os << caret << "^\n";
}

static size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1,
                         prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closestMatch(const std::string &name,
                         const std::vector<std::string> &candidates) {
  std::string best;
  size_t bestDistance = std::max<size_t>(1, std::min<size_t>(3, name.size() / 2));
  for (const std::string &c : candidates) {
    size_t lengthGap = c.size() > name.size() ? c.size() - name.size()
                                              : name.size() - c.size();
    if (lengthGap > bestDistance)
      continue;
    size_t d = editDistance(name, c);
    if (d <= bestDistance && (best.empty() || d < bestDistance || c < best)) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

} // namespace sinter
