//===- ConfigInternals.h - Private to the config loader ---------*- C++ -*-===//
//
// What the files of sinter_config share; ConfigLoader.h is the public face
// and ConfigLoader.cpp implements it from these steps. Each group below
// names the file that defines it.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RUNTIME_CONFIG_CONFIGINTERNALS_H
#define SINTER_RUNTIME_CONFIG_CONFIGINTERNALS_H

#include "runtime/config/ConfigLoader.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sinter::config::detail {

namespace pb = google::protobuf;
using FieldDescriptor = pb::FieldDescriptor;
using ParseInfoTree = pb::TextFormat::ParseInfoTree;

//===----------------------------------------------------------------------===//
// Small text helpers and "did you mean" suggestions (ConfigText.cpp)
//===----------------------------------------------------------------------===//

std::string formatInt(int64_t v);
std::string formatDouble(double v);
bool isIdentifier(const std::string &s);
std::string trim(const std::string &s);
std::string join(const std::vector<std::string> &parts, const std::string &sep);
std::string quoteAlternatives(const std::vector<std::string> &names);
std::string lowerFirst(std::string s);
std::optional<std::string> nearest(const std::string &name,
                                   const std::vector<std::string> &candidates);
std::vector<std::string> fieldNames(const pb::Descriptor *d);
std::vector<std::string> enumNames(const pb::EnumDescriptor *e);
/// Every dotted field path of the schema ("batch", "batch.global", ...).
const std::vector<std::string> &allPaths();
std::vector<std::string> pathsEndingIn(const std::string &tail);

//===----------------------------------------------------------------------===//
// Source text and diagnostics (ConfigDiagnostics.cpp)
//===----------------------------------------------------------------------===//

/// The config text split into lines, to turn protobuf's 0-based columns
/// (which advance tabs to multiples of 8) into 1-based character columns.
class SourceText {
public:
  explicit SourceText(const std::string &text);

  const std::string &line(int i) const;
  int column(int line0, int tokenizerColumn) const;

private:
  std::vector<std::string> lines;
};

/// Collects `file:line:col: error: message` lines, sorted by position when
/// printed so that they read in file order.
class Diagnostics {
public:
  Diagnostics(std::string displayPath, const SourceText *source)
      : displayPath(std::move(displayPath)), source(source) {}

  /// `line0`/`column0` are protobuf's 0-based positions; -1 for none.
  void error(int line0, int column0, const std::string &message);
  /// Same with a 1-based character column.
  void errorAtColumn(int line0, int column1, const std::string &message) {
    entries.push_back({line0, column1, message});
  }

  bool empty() const { return entries.empty(); }

  std::string take();

private:
  struct Entry {
    int line, column;
    std::string message;
  };
  std::string displayPath;
  const SourceText *source;
  std::vector<Entry> entries;
};

//===----------------------------------------------------------------------===//
// Field paths and their positions in the file (ConfigFieldPaths.cpp)
//===----------------------------------------------------------------------===//

struct PathStep {
  const FieldDescriptor *field;
  int index;       // -1 for a singular field
  std::string key; // map entries: shown instead of the index
  bool hidden = false; // the key/value field inside a map entry
};
using FieldPath = std::vector<PathStep>;

const pb::Descriptor *typeAt(const FieldPath &path);
/// `path` extended by the field `name` of the message it ends at.
FieldPath sub(FieldPath path, const char *name, int index = -1);
std::string displayName(const FieldPath &path);

/// Finds where a field was written: the deepest step of the path that the
/// file contains (a defaulted `batch.micro` points at `batch { ... }`).
class Locator {
public:
  explicit Locator(const ParseInfoTree *root) : root(root) {}

  std::pair<int, int> find(const FieldPath &path) const;

private:
  const ParseInfoTree *root;
};

/// The messages still open when the parser stopped.
FieldPath openPath(const ParseInfoTree *tree);

//===----------------------------------------------------------------------===//
// Parsing and parse-error rewriting (ConfigParse.cpp)
//===----------------------------------------------------------------------===//

class Collector : public pb::io::ErrorCollector {
public:
  struct Entry {
    int line, column;
    std::string message;
  };
  void AddError(int line, pb::io::ColumnNumber column,
                const std::string &message) override {
    entries.push_back({line, column, message});
  }
  void AddWarning(int, pb::io::ColumnNumber, const std::string &) override {}
  std::vector<Entry> entries;
};

/// Turns one of protobuf's parse errors into ours. `column1` (1-based) may be
/// moved to the start of the offending token.
std::string rewriteParseError(const std::string &message, const FieldPath &open,
                              const SourceText &source, int line0, int &column1);
/// Parses `text` into `out`, recording field positions in `tree`; parse
/// errors go to `diags`, rewritten.
bool parseRaw(const std::string &text, const SourceText &source,
              Diagnostics &diags, TrainConfig &out, ParseInfoTree &tree);

//===----------------------------------------------------------------------===//
// Validation (ConfigValidator.cpp)
//===----------------------------------------------------------------------===//

/// Divisors of `n` just below and above `near` (excluding `near`).
std::vector<int64_t> divisorsAround(int64_t n, int64_t near);
/// "1", "1 or 2", "1, 2 or 3".
std::string orList(const std::vector<int64_t> &values);
/// Checks every value of `cfg`, locating the faults through `tree` when
/// given; true when `diags` is still empty.
bool validate(const TrainConfig &cfg, const ParseInfoTree *tree, Diagnostics &diags);

//===----------------------------------------------------------------------===//
// Fields fixed when the program is compiled (CompiledFields.cpp)
//===----------------------------------------------------------------------===//

/// Refuses a change to a field compiled into the program.
void checkCompiledFields(const TrainConfig &compiled, const TrainConfig &overridden,
                         const ParseInfoTree *tree, Diagnostics &diags);

//===----------------------------------------------------------------------===//
// Merging, a second config over the first (ConfigMerge.cpp)
//===----------------------------------------------------------------------===//

/// Field-by-field overlay; see mergeConfigFile in ConfigLoader.h for the rules.
void overlay(pb::Message &dst, const pb::Message &src);

//===----------------------------------------------------------------------===//
// Overrides, --set FIELD=VALUE (ConfigOverrides.cpp)
//===----------------------------------------------------------------------===//

/// Sets one field of `cfg` without validating. `error` gets a bare message.
bool setField(TrainConfig &cfg, const std::string &dotted, const std::string &rawValue,
              std::string &error);
/// Splits `FIELD=VALUE`; on failure `error` is the whole diagnostic line.
bool splitAssignment(const std::string &assignment, std::string &field,
                     std::string &value, std::string &error);

} // namespace sinter::config::detail

#endif // SINTER_RUNTIME_CONFIG_CONFIGINTERNALS_H
