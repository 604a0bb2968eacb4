//===- Diagnostics.h - Source files and user-facing error reporting -------===//
//
// Every message the frontend prints has the form
//   file:line:col: error: message
//   <the source line>
//   <a caret under the column>
// Plain C++ (no MLIR), so the lexer, parser and semantic analysis can be
// fuzzed and unit-tested on their own.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_FRONTEND_DIAGNOSTICS_H
#define SINTER_FRONTEND_DIAGNOSTICS_H

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace sinter {

/// A position in a source file known to the SourceManager. File 0 is
/// reserved for "no location" (command line, config).
struct Loc {
  uint32_t file = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  bool valid() const { return file != 0; }
};

/// Owns the text of every file the compiler read.
class SourceManager {
public:
  SourceManager();
  /// Registers a buffer and returns its file id.
  uint32_t addBuffer(std::string path, std::string text);
  /// Reads a file from disk; returns 0 (and sets `error`) when unreadable.
  uint32_t addFile(const std::string &path, std::string &error);
  const std::string &path(uint32_t file) const { return files_[file].path; }
  uint32_t fileCount() const { return files_.size(); }
  const std::string &text(uint32_t file) const { return files_[file].text; }
  /// The text of one line, without its newline.
  std::string lineText(Loc loc) const;

private:
  struct File {
    std::string path;
    std::string text;
  };
  std::vector<File> files_;
};

enum class Severity { Error, Warning, Note };

/// Formats and counts diagnostics. Writes to the stream given (stderr by
/// default); the first error usually ends a compilation.
class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &sources);
  void setStream(std::ostream &os) { os_ = &os; }
  void report(Loc loc, Severity severity, const std::string &message);
  void error(Loc loc, const std::string &message) {
    report(loc, Severity::Error, message);
  }
  void warning(Loc loc, const std::string &message) {
    report(loc, Severity::Warning, message);
  }
  void note(Loc loc, const std::string &message) {
    report(loc, Severity::Note, message);
  }
  unsigned errorCount() const { return errors_; }
  bool hadError() const { return errors_ != 0; }
  const SourceManager &sources() const { return sources_; }
  /// `file:line:col` of a location, for messages that mention another place.
  std::string where(Loc loc) const;

private:
  const SourceManager &sources_;
  std::ostream *os_;
  unsigned errors_ = 0;
};

/// The closest candidate within a small edit distance, or "".
std::string closestMatch(const std::string &name,
                         const std::vector<std::string> &candidates);

} // namespace sinter

#endif // SINTER_FRONTEND_DIAGNOSTICS_H
