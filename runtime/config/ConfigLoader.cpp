//===- ConfigLoader.cpp - Load and check the training config --------------===//
//
// Parsing is protobuf's TextFormat::Parser; what this file adds is the
// diagnostics: 1-based positions, dotted field names, suggestions for
// misspelt fields and enum values, and the checks of LANGUAGE.md section 10
// that the schema cannot express. Field positions come from a
// TextFormat::ParseInfoTree recorded during the parse.
//
//===----------------------------------------------------------------------===//

#include "runtime/config/ConfigLoader.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string_view>
#include <type_traits>
#include <utility>

namespace sinter::config {
namespace {

namespace pb = google::protobuf;
using FieldDescriptor = pb::FieldDescriptor;
using ParseInfoTree = pb::TextFormat::ParseInfoTree;

//===----------------------------------------------------------------------===//
// Small text helpers
//===----------------------------------------------------------------------===//

std::string formatInt(int64_t v) { return std::to_string(v); }

/// Shortest decimal that reads back as `v`, so 3e-4 prints as 0.0003, not
/// 0.00029999999999999997, and 40 as 40, not 4e+01.
std::string formatDouble(double v) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || !(std::isalpha((unsigned char)s[0]) || s[0] == '_'))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum((unsigned char)c) || c == '_';
  });
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string join(const std::vector<std::string> &parts, const std::string &sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? sep : "") + parts[i];
  return out;
}

/// "'a'", "'a' or 'b'", "'a', 'b' or 'c'".
std::string quoteAlternatives(const std::vector<std::string> &names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i)
      out += i + 1 == names.size() ? " or " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

/// Protobuf's messages start with a capital; ours follow the compiler
/// convention of a lowercase start.
std::string lowerFirst(std::string s) {
  if (s.size() >= 2 && std::isupper((unsigned char)s[0]) &&
      !std::isupper((unsigned char)s[1]))
    s[0] = (char)std::tolower((unsigned char)s[0]);
  return s;
}

/// Optimal string alignment distance, case-insensitive, so that a swapped
/// pair ("mciro") or a case slip ("ddp") counts as one edit.
int editDistance(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return (char)std::tolower((unsigned char)c); };
  size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i)
    d[i][0] = (int)i;
  for (size_t j = 0; j <= m; ++j)
    d[0][j] = (int)j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      int cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

/// The candidate closest to `name`, if it is close enough to be a typo.
std::optional<std::string> nearest(const std::string &name,
                                   const std::vector<std::string> &candidates) {
  int limit = std::max<int>(1, ((int)name.size() + 2) / 3);
  std::optional<std::string> best;
  int bestDist = limit + 1;
  for (const std::string &c : candidates) {
    int dist = editDistance(name, c);
    if (dist < bestDist) {
      bestDist = dist;
      best = c;
    }
  }
  return best;
}

std::vector<std::string> fieldNames(const pb::Descriptor *d) {
  std::vector<std::string> names;
  for (int i = 0; i < d->field_count(); ++i)
    names.push_back(d->field(i)->name());
  return names;
}

std::vector<std::string> enumNames(const pb::EnumDescriptor *e) {
  std::vector<std::string> names;
  for (int i = 0; i < e->value_count(); ++i)
    names.push_back(e->value(i)->name());
  return names;
}

/// Every dotted field path of the schema below `d` ("batch", "batch.global",
/// ...), to find where a field given at the wrong place really lives.
void collectPaths(const pb::Descriptor *d, const std::string &prefix,
                  std::vector<std::string> &out) {
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor *f = d->field(i);
    std::string path = prefix.empty() ? f->name() : prefix + "." + f->name();
    out.push_back(path);
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !f->is_map())
      collectPaths(f->message_type(), path, out);
  }
}

const std::vector<std::string> &allPaths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out;
    collectPaths(TrainConfig::descriptor(), "", out);
    return out;
  }();
  return paths;
}

/// Schema paths that end in `tail` ("lr" -> optimizer.adamw.lr, optimizer.sgd.lr).
std::vector<std::string> pathsEndingIn(const std::string &tail) {
  std::vector<std::string> out;
  for (const std::string &p : allPaths())
    if (p == tail || (p.size() > tail.size() &&
                      p.compare(p.size() - tail.size(), tail.size(), tail) == 0 &&
                      p[p.size() - tail.size() - 1] == '.'))
      out.push_back(p);
  return out;
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

/// The config text split into lines, to turn protobuf's 0-based columns
/// (which advance tabs to multiples of 8) into 1-based character columns.
class SourceText {
public:
  explicit SourceText(const std::string &text) {
    size_t start = 0;
    for (;;) {
      size_t nl = text.find('\n', start);
      lines.push_back(text.substr(start, nl == std::string::npos ? nl : nl - start));
      if (nl == std::string::npos)
        break;
      start = nl + 1;
    }
  }

  const std::string &line(int i) const {
    static const std::string empty;
    return i >= 0 && i < (int)lines.size() ? lines[i] : empty;
  }

  int column(int line0, int tokenizerColumn) const {
    const std::string &l = line(line0);
    int visual = 0;
    for (size_t i = 0; i < l.size(); ++i) {
      if (visual >= tokenizerColumn)
        return (int)i + 1;
      visual = l[i] == '\t' ? visual + 8 - visual % 8 : visual + 1;
    }
    return (int)l.size() + 1 + std::max(0, tokenizerColumn - visual);
  }

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
  void error(int line0, int column0, const std::string &message) {
    int column1 = line0 < 0 ? -1 : source ? source->column(line0, column0) : column0 + 1;
    errorAtColumn(line0, column1, message);
  }
  /// Same with a 1-based character column.
  void errorAtColumn(int line0, int column1, const std::string &message) {
    entries.push_back({line0, column1, message});
  }

  bool empty() const { return entries.empty(); }

  std::string take() {
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
// Field paths and their positions in the file
//===----------------------------------------------------------------------===//

struct PathStep {
  const FieldDescriptor *field;
  int index;       // -1 for a singular field
  std::string key; // map entries: shown instead of the index
  bool hidden = false; // the key/value field inside a map entry
};
using FieldPath = std::vector<PathStep>;

const pb::Descriptor *typeAt(const FieldPath &path) {
  return path.empty() ? TrainConfig::descriptor() : path.back().field->message_type();
}

/// `path` extended by the field `name` of the message it ends at.
FieldPath sub(FieldPath path, const char *name, int index = -1) {
  const FieldDescriptor *f = typeAt(path)->FindFieldByName(name);
  path.push_back({f, index, ""});
  return path;
}

std::string displayName(const FieldPath &path) {
  std::string out;
  for (const PathStep &step : path) {
    if (step.hidden)
      continue;
    out += (out.empty() ? "" : ".") + step.field->name();
    if (!step.key.empty())
      out += "." + step.key;
    else if (step.index >= 0 && !step.field->is_map())
      out += "[" + std::to_string(step.index) + "]";
  }
  return out;
}

/// Finds where a field was written: the deepest step of the path that the
/// file contains (a defaulted `batch.micro` points at `batch { ... }`).
class Locator {
public:
  explicit Locator(const ParseInfoTree *root) : root(root) {}

  std::pair<int, int> find(const FieldPath &path) const {
    std::pair<int, int> best{-1, -1};
    const ParseInfoTree *tree = root;
    for (const PathStep &step : path) {
      if (!tree)
        break;
      pb::TextFormat::ParseLocation loc = tree->GetLocation(step.field, step.index);
      if (loc.line < 0)
        break;
      best = {loc.line, loc.column};
      if (step.field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE)
        break;
      tree = tree->GetTreeForNested(step.field, step.index);
    }
    return best;
  }

private:
  const ParseInfoTree *root;
};

/// The messages still open when the parser stopped: the parser creates a
/// nested tree when a message starts and records its location only when it
/// ends, so the open ones are the nested trees without a location.
FieldPath openPath(const ParseInfoTree *tree) {
  FieldPath path;
  const pb::Descriptor *d = TrainConfig::descriptor();
  while (tree) {
    const ParseInfoTree *next = nullptr;
    for (int i = 0; i < d->field_count() && !next; ++i) {
      const FieldDescriptor *f = d->field(i);
      if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE)
        continue;
      if (!f->is_repeated()) {
        const ParseInfoTree *nested = tree->GetTreeForNested(f, -1);
        if (nested && tree->GetLocation(f, -1).line < 0) {
          next = nested;
          path.push_back({f, -1, ""});
        }
        continue;
      }
      // Only the last element of a repeated field can still be open.
      int last = -1;
      while (tree->GetTreeForNested(f, last + 1))
        ++last;
      if (last >= 0 && tree->GetLocation(f, last).line < 0) {
        next = tree->GetTreeForNested(f, last);
        path.push_back({f, last, ""});
      }
    }
    if (!next)
      break;
    tree = next;
    d = path.back().field->message_type();
  }
  return path;
}

//===----------------------------------------------------------------------===//
// Parsing
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

/// "set" for a map entry, "data.train.npy[1]" otherwise; "" at the top.
std::string contextName(const FieldPath &open) {
  std::string out;
  for (const PathStep &step : open) {
    out += (out.empty() ? "" : ".") + step.field->name();
    if (step.index >= 0 && !step.field->is_map())
      out += "[" + std::to_string(step.index) + "]";
  }
  return out;
}

std::string unknownFieldMessage(const std::string &name, const pb::Descriptor *d,
                                const FieldPath &open) {
  std::string context = contextName(open);
  std::string where = context.empty() ? "" : " in '" + context + "'";
  std::string msg = "unknown field '" + name + "'" + where;
  std::vector<std::string> names = fieldNames(d);
  if (std::optional<std::string> near = nearest(name, names))
    return msg + "; did you mean '" + *near + "'?";
  // A field of an enclosing message: most likely a '}' is missing.
  for (size_t depth = open.size(); depth-- > 0;) {
    FieldPath outer(open.begin(), open.begin() + depth);
    if (typeAt(outer)->FindFieldByName(name))
      return msg + "; is a '}' missing before it? '" + name + "' is a field of " +
             (outer.empty() ? std::string("the top level") : "'" + contextName(outer) + "'");
  }
  std::vector<std::string> elsewhere = pathsEndingIn(name);
  if (!elsewhere.empty())
    return msg + "; '" + name + "' belongs at " + quoteAlternatives(elsewhere);
  return msg + "; the fields here are " + join(names, ", ");
}

/// Protobuf reports a misspelt name or value after the token; diagnostics
/// point at its start. `column1` is 1-based; returns it unchanged when the
/// token is not found just before it.
int startOfToken(const SourceText &source, int line0, int column1, const std::string &token) {
  const std::string &line = source.line(line0);
  size_t end = std::min<size_t>(line.size(), column1 > 0 ? column1 - 1 : 0);
  while (end > 0 && std::isspace((unsigned char)line[end - 1]))
    --end;
  if (token.empty() || end < token.size() ||
      line.compare(end - token.size(), token.size(), token) != 0)
    return column1;
  return (int)(end - token.size()) + 1;
}

/// Turns one of protobuf's parse errors into ours. `column1` (1-based) may be
/// moved to the start of the offending token.
std::string rewriteParseError(const std::string &message, const FieldPath &open,
                              const SourceText &source, int line0, int &column1) {
  static const std::regex unknownField(
      R"re(Message type "([^"]+)" has no field named "([^"]+)"\.)re");
  static const std::regex unknownEnum(
      R"re(Unknown enumeration value of "([^"]*)" for field "([^"]+)"\.)re");
  static const std::regex repeatedSingular(
      R"re(Non-repeated field "([^"]+)" is specified multiple times\.)re");
  static const std::regex oneofClash(
      R"re(Field "([^"]+)" is specified along with field "([^"]+)", another member of oneof "([^"]+)"\.)re");

  std::string context = contextName(open);
  auto qualify = [&](const std::string &field) {
    return context.empty() ? field : context + "." + field;
  };
  const pb::Descriptor *openType = typeAt(open);
  std::smatch m;

  if (std::regex_match(message, m, unknownField)) {
    const pb::Descriptor *d =
        pb::DescriptorPool::generated_pool()->FindMessageTypeByName(m[1].str());
    column1 = startOfToken(source, line0, column1, m[2].str());
    return unknownFieldMessage(m[2].str(), d ? d : openType, open);
  }
  if (std::regex_match(message, m, unknownEnum)) {
    std::string value = m[1].str(), field = m[2].str();
    column1 = startOfToken(source, line0, column1, value);
    const FieldDescriptor *f = openType->FindFieldByName(field);
    if (!f || f->cpp_type() != FieldDescriptor::CPPTYPE_ENUM)
      return lowerFirst(message);
    std::vector<std::string> names = enumNames(f->enum_type());
    std::string msg = "unknown value '" + value + "' for " + qualify(field);
    if (std::optional<std::string> near = nearest(value, names))
      msg += "; did you mean '" + *near + "'?";
    return msg + " (expected one of " + join(names, ", ") + ")";
  }
  if (std::regex_match(message, m, repeatedSingular)) {
    column1 = startOfToken(source, line0, column1, m[1].str());
    return qualify(m[1].str()) + " is given more than once";
  }
  if (std::regex_match(message, m, oneofClash)) {
    column1 = startOfToken(source, line0, column1, m[1].str());
    return qualify(m[1].str()) + " cannot be given together with " +
           qualify(m[2].str()) + "; choose one";
  }
  // Running out of text inside a message, or a '}' with no message to close.
  if (message == "Expected identifier, got: " && !context.empty())
    return "unexpected end of file: '" + context + " {' is not closed";
  if (message == "Expected identifier, got: }" && context.empty())
    return "unexpected '}': no message is open here";

  // A bad value ("Expected integer, got: x"): name the field when it is
  // written on the same line just before the value.
  static const std::regex fieldBeforeValue(R"re(([A-Za-z_][A-Za-z0-9_]*)\s*:\s*$)re");
  std::string before = source.line(line0).substr(0, std::max(0, column1 - 1));
  if (std::regex_search(before, m, fieldBeforeValue)) {
    if (const FieldDescriptor *f = openType->FindFieldByName(m[1].str())) {
      std::string name = qualify(f->name());
      bool isUnsigned = f->cpp_type() == FieldDescriptor::CPPTYPE_UINT64 ||
                        f->cpp_type() == FieldDescriptor::CPPTYPE_UINT32;
      if (isUnsigned && message == "Expected integer, got: -")
        return name + " must not be negative";
      if (message.rfind("Expected string", 0) == 0)
        return name + ": " + lowerFirst(message) + " (write strings in double quotes)";
      return name + ": " + lowerFirst(message);
    }
  }
  if (!context.empty())
    return lowerFirst(message) + " (in '" + context + "')";
  return lowerFirst(message);
}

bool parseRaw(const std::string &text, const SourceText &source,
              Diagnostics &diags, TrainConfig &out, ParseInfoTree &tree) {
  Collector collector;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  parser.WriteLocationsTo(&tree);
  if (parser.ParseFromString(text, &out))
    return true;
  FieldPath open = openPath(&tree);
  for (const Collector::Entry &e : collector.entries) {
    int column1 = source.column(e.line, e.column);
    std::string message = rewriteParseError(e.message, open, source, e.line, column1);
    diags.errorAtColumn(e.line, column1, message);
  }
  if (collector.entries.empty())
    diags.error(-1, -1, "cannot parse the config");
  return false;
}

//===----------------------------------------------------------------------===//
// Defaults
//===----------------------------------------------------------------------===//

/// The defaults the schema cannot state. Idempotent, and it never touches a
/// field the file wrote, so a config completed here can still be overlaid.
void applyDefaults(TrainConfig &cfg) {
  // Left alone when global is bad, so that only global is reported.
  if (!cfg.batch().has_micro() && cfg.batch().global() > 0)
    cfg.mutable_batch()->set_micro(cfg.batch().global());
  if (!cfg.has_optimizer())
    cfg.mutable_optimizer()->mutable_adamw();
  if (cfg.schedule().kind_case() == TrainConfig::Schedule::KIND_NOT_SET)
    cfg.mutable_schedule()->mutable_constant();
  if (!cfg.data().has_train())
    cfg.mutable_data()->mutable_train()->mutable_synthetic();
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

/// Divisors of `n` just below and above `near` (excluding `near`), to
/// suggest batch sizes that work.
std::vector<int64_t> divisorsAround(int64_t n, int64_t near) {
  int64_t below = 0, above = 0;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d)
      continue;
    for (int64_t c : {d, n / d}) {
      if (c < near && c > below)
        below = c;
      if (c > near && (above == 0 || c < above))
        above = c;
    }
  }
  std::vector<int64_t> out;
  if (below)
    out.push_back(below);
  if (above)
    out.push_back(above);
  return out;
}

std::string orList(const std::vector<int64_t> &values) {
  std::vector<std::string> parts;
  for (int64_t v : values)
    parts.push_back(formatInt(v));
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? (i + 1 == parts.size() ? " or " : ", ") : "") + parts[i];
  return out;
}

class Validator {
public:
  Validator(Diagnostics &diags, const Locator *locator)
      : diags(diags), locator(locator) {}

  void run(const TrainConfig &cfg);

private:
  void report(const FieldPath &path, const std::string &message) {
    std::pair<int, int> at = locator ? locator->find(path) : std::pair{-1, -1};
    diags.error(at.first, at.second, message);
  }

  void positive(const FieldPath &p, int64_t v) {
    if (v <= 0)
      report(p, displayName(p) + " (" + formatInt(v) + ") must be positive");
  }
  void nonNegative(const FieldPath &p, int64_t v) {
    if (v < 0)
      report(p, displayName(p) + " (" + formatInt(v) + ") must not be negative");
  }
  // The negated comparisons below also reject NaN.
  void positive(const FieldPath &p, double v) {
    if (!(v > 0) || !std::isfinite(v))
      report(p, displayName(p) + " (" + formatDouble(v) + ") must be a positive number");
  }
  void nonNegative(const FieldPath &p, double v) {
    if (!(v >= 0) || !std::isfinite(v))
      report(p, displayName(p) + " (" + formatDouble(v) + ") must not be negative");
  }
  void unitInterval(const FieldPath &p, double v) {
    if (!(v >= 0 && v < 1))
      report(p, displayName(p) + " (" + formatDouble(v) + ") must be in [0, 1)");
  }

  void checkBatch(const TrainConfig &cfg);
  void checkOptimizer(const TrainConfig &cfg);
  void checkSource(const FieldPath &p, const TrainConfig::DataSource &source);
  void checkMaps(const TrainConfig &cfg);
  void checkTensorMap(const TrainConfig &cfg);

  Diagnostics &diags;
  const Locator *locator;
};

void Validator::checkBatch(const TrainConfig &cfg) {
  FieldPath batch = sub({}, "batch");
  FieldPath global = sub(batch, "global"), micro = sub(batch, "micro");
  const TrainConfig::Batch &b = cfg.batch();
  positive(global, b.global());
  if (b.has_micro())
    positive(micro, b.micro());
  if (b.global() <= 0 || !b.has_micro() || b.micro() <= 0 || b.global() % b.micro() == 0)
    return;
  std::string msg = "batch.micro (" + formatInt(b.micro()) +
                    ") does not divide batch.global (" + formatInt(b.global()) + ")";
  std::vector<int64_t> near = divisorsAround(b.global(), b.micro());
  if (!near.empty())
    msg += "; the nearest micro batches that do are " + orList(near);
  report(micro, msg);
}

void Validator::checkOptimizer(const TrainConfig &cfg) {
  FieldPath opt = sub({}, "optimizer");
  const TrainConfig::Optimizer &o = cfg.optimizer();
  if (o.has_adamw()) {
    FieldPath p = sub(opt, "adamw");
    const TrainConfig::AdamW &a = o.adamw();
    positive(sub(p, "lr"), a.lr());
    unitInterval(sub(p, "beta1"), a.beta1());
    unitInterval(sub(p, "beta2"), a.beta2());
    positive(sub(p, "eps"), a.eps());
    nonNegative(sub(p, "weight_decay"), a.weight_decay());
    return;
  }
  if (o.has_sgd()) {
    FieldPath p = sub(opt, "sgd");
    const TrainConfig::Sgd &s = o.sgd();
    positive(sub(p, "lr"), s.lr());
    nonNegative(sub(p, "momentum"), s.momentum());
    nonNegative(sub(p, "weight_decay"), s.weight_decay());
    if (s.nesterov() && s.momentum() == 0)
      report(sub(p, "nesterov"),
             "optimizer.sgd.nesterov needs optimizer.sgd.momentum > 0 (it is 0)");
    return;
  }
  report(opt, "optimizer is empty; write adamw { ... } or sgd { ... } in it");
}

void Validator::checkSource(const FieldPath &p, const TrainConfig::DataSource &s) {
  std::string name = displayName(p);
  std::vector<std::string> forms;
  if (s.npy_size())
    forms.push_back("npy");
  if (s.has_tokens())
    forms.push_back("tokens");
  if (s.has_synthetic())
    forms.push_back("synthetic");
  if (forms.empty())
    report(p, name + " has no source; write npy { input: \"x\" path: \"x.npy\" }, "
                     "tokens { path: \"train.bin\" } or synthetic {} in it");
  if (forms.size() > 1)
    report(p, name + " gives " + join(forms, " and ") + "; a data source has one form");

  std::vector<std::pair<std::string, int>> seen;
  for (int i = 0; i < s.npy_size(); ++i) {
    FieldPath entry = sub(p, "npy", i);
    const TrainConfig::Npy &npy = s.npy(i);
    std::string entryName = displayName(entry);
    if (npy.input().empty())
      report(entry, entryName + " needs the model input it feeds (input: \"x\")");
    else if (!isIdentifier(npy.input()))
      report(sub(entry, "input"), entryName + ".input (\"" + npy.input() +
                                      "\") is not an identifier");
    if (npy.path().empty())
      report(entry, entryName + " needs the path of its .npy file (path: \"x.npy\")");
    if (npy.input().empty())
      continue;
    auto it = std::find_if(seen.begin(), seen.end(),
                           [&](const auto &e) { return e.first == npy.input(); });
    if (it != seen.end())
      report(sub(entry, "input"), entryName + ".input (\"" + npy.input() +
                                      "\") is already fed by " + name + ".npy[" +
                                      std::to_string(it->second) + "]");
    else
      seen.emplace_back(npy.input(), i);
  }
  if (s.has_tokens() && s.tokens().path().empty())
    report(sub(p, "tokens"), name + ".tokens needs the path of its token file "
                                    "(path: \"train.bin\")");
}

/// Map entries are walked through reflection because only the repeated view
/// keeps the file's order, which the location tree is indexed by.
void Validator::checkMaps(const TrainConfig &cfg) {
  const pb::Reflection *refl = cfg.GetReflection();
  for (const char *mapName : {"set", "shapes"}) {
    const FieldDescriptor *f = TrainConfig::descriptor()->FindFieldByName(mapName);
    const FieldDescriptor *keyField = f->message_type()->map_key();
    const FieldDescriptor *valueField = f->message_type()->map_value();
    std::set<std::string> seen;
    for (int i = 0, e = refl->FieldSize(cfg, f); i < e; ++i) {
      const pb::Message &entry = refl->GetRepeatedMessage(cfg, f, i);
      const pb::Reflection *er = entry.GetReflection();
      std::string key = er->GetString(entry, keyField);
      FieldPath keyPath{{f, i, key}, {keyField, -1, "", true}};
      FieldPath valuePath{{f, i, key}, {valueField, -1, "", true}};
      std::string what = std::string(mapName) + " key \"" + key + "\"";
      if (!isIdentifier(key)) {
        report(keyPath, what + " is not an identifier");
        continue;
      }
      if (!seen.insert(key).second)
        report(keyPath, what + " is given more than once");
      if (f->name() == "shapes") {
        if (key == "B")
          report(keyPath, "shapes cannot bind B; the batch dimension is batch.micro");
        int64_t v = er->GetInt64(entry, valueField);
        if (v <= 0)
          report(valuePath, "shapes." + key + " (" + formatInt(v) + ") must be positive");
      }
    }
  }
}

/// Each rule names both sides, and a '*' on one side has one on the other.
void Validator::checkTensorMap(const TrainConfig &cfg) {
  FieldPath map = sub({}, "tensor_map");
  auto stars = [](const std::string &s) { return std::count(s.begin(), s.end(), '*'); };
  for (int i = 0; i < cfg.tensor_map().rule_size(); ++i) {
    const auto &rule = cfg.tensor_map().rule(i);
    FieldPath at = sub(map, "rule", i);
    if (rule.param().empty() || rule.file().empty())
      report(at, "tensor_map.rule needs both param and file");
    else if (stars(rule.param()) > 1 || stars(rule.file()) != stars(rule.param()))
      report(sub(at, "file"), "tensor_map.rule: param \"" + rule.param() + "\" and file \"" +
                                  rule.file() +
                                  "\" must have one '*' each, or none");
  }
  for (int i = 0; i < cfg.tensor_map().ignore_size(); ++i)
    if (stars(cfg.tensor_map().ignore(i)) > 1)
      report(sub(map, "ignore", i), "tensor_map.ignore \"" + cfg.tensor_map().ignore(i) +
                                        "\" may have one '*' at most");
}

void Validator::run(const TrainConfig &cfg) {
  checkMaps(cfg);
  checkTensorMap(cfg);
  checkBatch(cfg);
  checkOptimizer(cfg);

  FieldPath schedule = sub({}, "schedule");
  nonNegative(sub(schedule, "warmup_steps"), cfg.schedule().warmup_steps());
  if (cfg.schedule().has_cosine())
    nonNegative(sub(sub(schedule, "cosine"), "min_lr"), cfg.schedule().cosine().min_lr());
  if (cfg.schedule().has_linear())
    nonNegative(sub(sub(schedule, "linear"), "end_lr"), cfg.schedule().linear().end_lr());

  FieldPath scaling = sub({}, "lr_scaling");
  const TrainConfig::LrScaling &ls = cfg.lr_scaling();
  if (ls.rule() != TrainConfig::LrScaling::NONE && ls.base_global_batch() <= 0)
    report(ls.has_base_global_batch() ? sub(scaling, "base_global_batch")
                                      : sub(scaling, "rule"),
           "lr_scaling.rule " + TrainConfig::LrScaling::Rule_Name(ls.rule()) +
               " needs lr_scaling.base_global_batch > 0 (it is " +
               formatInt(ls.base_global_batch()) + ")");
  else
    nonNegative(sub(scaling, "base_global_batch"), ls.base_global_batch());

  nonNegative(sub({}, "clip_grad_norm"), cfg.clip_grad_norm());
  FieldPath parallel = sub({}, "parallel");
  positive(sub(parallel, "bucket_cap_mb"), cfg.parallel().bucket_cap_mb());
  nonNegative(sub(parallel, "world_size"), int64_t(cfg.parallel().world_size()));
  TrainConfig::Parallel::Strategy strategy = cfg.parallel().strategy();
  bool sharded = strategy != TrainConfig::Parallel::DDP;
  if (sharded && cfg.parallel().world_size() < 1)
    report(sub(parallel, "strategy"),
           "parallel.strategy " + TrainConfig::Parallel::Strategy_Name(strategy) +
               " compiles each rank's shard of the optimizer state, so it needs "
               "parallel.world_size, the number of ranks (--set "
               "parallel.world_size=N)");

  if (cfg.parallel().collectives() == TrainConfig::Parallel::NCCL &&
      cfg.device() != TrainConfig::CUDA)
    report(sub(parallel, "collectives"),
           "parallel.collectives NCCL runs between GPUs, so it needs device: CUDA "
           "(this config has device " + TrainConfig::Device_Name(cfg.device()) +
               "); CPU ranks use GLOO (or AUTO)");

  FieldPath data = sub({}, "data");
  checkSource(sub(data, "train"), cfg.data().train());
  if (cfg.data().has_eval())
    checkSource(sub(data, "eval"), cfg.data().eval());

  nonNegative(sub({}, "steps"), cfg.steps());

  FieldPath eval = sub({}, "eval");
  nonNegative(sub(eval, "every"), cfg.eval().every());
  nonNegative(sub(eval, "batches"), cfg.eval().batches());
  if (cfg.eval().every() > 0 && !cfg.data().has_eval())
    report(sub(eval, "every"), "eval.every (" + formatInt(cfg.eval().every()) +
                                   ") asks for evaluation but data.eval gives no data");

  positive(sub(sub({}, "log"), "every"), cfg.log().every());

  FieldPath ckpt = sub({}, "checkpoint");
  const TrainConfig::Checkpoint &c = cfg.checkpoint();
  nonNegative(sub(ckpt, "every"), c.every());
  if (c.keep() < 1)
    report(sub(ckpt, "keep"),
           "checkpoint.keep (" + formatInt(c.keep()) + ") must be at least 1");
  if (c.dir().empty() && c.every() > 0)
    report(sub(ckpt, "every"), "checkpoint.every (" + formatInt(c.every()) +
                                   ") needs checkpoint.dir to say where to write");
  if (c.dir().empty() && c.resume())
    report(sub(ckpt, "resume"), "checkpoint.resume needs checkpoint.dir to say "
                                "where to look");
}

bool validate(const TrainConfig &cfg, const ParseInfoTree *tree, Diagnostics &diags) {
  Locator locator(tree);
  Validator(diags, tree ? &locator : nullptr).run(cfg);
  return diags.empty();
}

//===----------------------------------------------------------------------===//
// Fields fixed when the program is compiled
//===----------------------------------------------------------------------===//

/// `key=value, ...` in key order, or "none".
template <typename V>
std::string mapText(const google::protobuf::Map<std::string, V> &map) {
  std::map<std::string, std::string> sorted;
  for (const auto &[key, value] : map) {
    if constexpr (std::is_same_v<V, std::string>)
      sorted[key] = value;
    else
      sorted[key] = std::to_string(value);
  }
  std::string out;
  for (const auto &[key, value] : sorted)
    out += (out.empty() ? "" : ", ") + key + "=" + value;
  return out.empty() ? "none" : out;
}

/// A field sinterc compiles into the program: its path and how it reads.
struct CompiledField {
  std::vector<const char *> path;
  std::string (*text)(const TrainConfig &);
};

const CompiledField kCompiledFields[] = {
    {{"model"}, [](const TrainConfig &c) { return "\"" + c.model() + "\""; }},
    {{"model_name"}, [](const TrainConfig &c) { return "\"" + c.model_name() + "\""; }},
    {{"set"}, [](const TrainConfig &c) { return mapText(c.set()); }},
    {{"shapes"}, [](const TrainConfig &c) { return mapText(c.shapes()); }},
    {{"parallel", "batch_norm"},
     [](const TrainConfig &c) {
       return TrainConfig::Parallel::BatchNorm_Name(c.parallel().batch_norm());
     }},
    {{"parallel", "strategy"},
     [](const TrainConfig &c) {
       return TrainConfig::Parallel::Strategy_Name(c.parallel().strategy());
     }},
    {{"parallel", "world_size"},
     [](const TrainConfig &c) { return formatInt(c.parallel().world_size()); }},
    {{"parallel", "bucket_cap_mb"},
     [](const TrainConfig &c) { return formatDouble(c.parallel().bucket_cap_mb()); }},
    {{"parallel", "overlap"},
     [](const TrainConfig &c) {
       return std::string(c.parallel().overlap() ? "true" : "false");
     }},
    {{"device"}, [](const TrainConfig &c) { return TrainConfig::Device_Name(c.device()); }},
    {{"precision", "compute"},
     [](const TrainConfig &c) {
       return TrainConfig::Precision::Compute_Name(c.precision().compute());
     }},
};

/// sinterc compiles the model with its constants and shapes, the batch-norm
/// mode, the gradient bucket layout and its overlap, the device and the
/// compute precision into the program, so a run-time
/// config or --set (laid over the compiled-in config) that changes one of
/// them would be ignored: it is refused, at the field when `tree` holds the
/// overriding file's positions.
void checkCompiledFields(const TrainConfig &compiled, const TrainConfig &overridden,
                         const ParseInfoTree *tree, Diagnostics &diags) {
  for (const CompiledField &field : kCompiledFields) {
    std::string was = field.text(compiled), now = field.text(overridden);
    if (now == was)
      continue;
    FieldPath path, firstEntry;
    for (const char *name : field.path)
      path = sub(path, name);
    // A map (set, shapes) is located at its first entry in the file.
    firstEntry = path;
    if (firstEntry.back().field->is_repeated())
      firstEntry.back().index = 0;
    std::pair<int, int> at = tree ? Locator(tree).find(firstEntry) : std::pair{-1, -1};
    diags.error(at.first, at.second,
                displayName(path) + " (" + now +
                    ") is fixed when sinterc compiles the program (this one has " +
                    was + "); changing it at run time is not built yet, "
                    "so recompile with the new value");
  }
}

//===----------------------------------------------------------------------===//
// Merging (a second config over the first)
//===----------------------------------------------------------------------===//

void copyScalar(pb::Message &dst, const pb::Message &src, const FieldDescriptor *f) {
  const pb::Reflection *d = dst.GetReflection(), *s = src.GetReflection();
  switch (f->cpp_type()) {
  case FieldDescriptor::CPPTYPE_INT32:
    return d->SetInt32(&dst, f, s->GetInt32(src, f));
  case FieldDescriptor::CPPTYPE_INT64:
    return d->SetInt64(&dst, f, s->GetInt64(src, f));
  case FieldDescriptor::CPPTYPE_UINT32:
    return d->SetUInt32(&dst, f, s->GetUInt32(src, f));
  case FieldDescriptor::CPPTYPE_UINT64:
    return d->SetUInt64(&dst, f, s->GetUInt64(src, f));
  case FieldDescriptor::CPPTYPE_DOUBLE:
    return d->SetDouble(&dst, f, s->GetDouble(src, f));
  case FieldDescriptor::CPPTYPE_FLOAT:
    return d->SetFloat(&dst, f, s->GetFloat(src, f));
  case FieldDescriptor::CPPTYPE_BOOL:
    return d->SetBool(&dst, f, s->GetBool(src, f));
  case FieldDescriptor::CPPTYPE_ENUM:
    return d->SetEnumValue(&dst, f, s->GetEnumValue(src, f));
  case FieldDescriptor::CPPTYPE_STRING:
    return d->SetString(&dst, f, s->GetString(src, f));
  case FieldDescriptor::CPPTYPE_MESSAGE:
    return;
  }
}

/// Field-by-field overlay; see mergeConfigFile in the header for the rules.
void overlay(pb::Message &dst, const pb::Message &src) {
  const pb::Reflection *d = dst.GetReflection(), *s = src.GetReflection();
  std::vector<const FieldDescriptor *> fields;
  s->ListFields(src, &fields);
  for (const FieldDescriptor *f : fields) {
    if (f->is_map()) {
      // Message::MergeFrom merges maps by key, later values winning; a
      // message holding only this map's entries merges just those.
      std::unique_ptr<pb::Message> entries(dst.New());
      for (int i = 0, e = s->FieldSize(src, f); i < e; ++i)
        entries->GetReflection()->AddMessage(entries.get(), f)->CopyFrom(
            s->GetRepeatedMessage(src, f, i));
      dst.MergeFrom(*entries);
      continue;
    }
    if (f->is_repeated()) {
      // Replaced whole, whatever the element type: swapped in from a copy.
      std::unique_ptr<pb::Message> copy(src.New());
      copy->CopyFrom(src);
      d->ClearField(&dst, f);
      d->SwapFields(&dst, copy.get(), {f});
      continue;
    }
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
      copyScalar(dst, src, f);
      continue;
    }
    // A data source is one choice (npy, tokens or synthetic), so it is
    // replaced whole rather than mixed.
    if (f->message_type() == TrainConfig::DataSource::descriptor()) {
      d->MutableMessage(&dst, f)->CopyFrom(s->GetMessage(src, f));
      continue;
    }
    // MutableMessage on a oneof member also clears the other members.
    overlay(*d->MutableMessage(&dst, f), s->GetMessage(src, f));
  }
}

//===----------------------------------------------------------------------===//
// Overrides (--set FIELD=VALUE)
//===----------------------------------------------------------------------===//

std::string stripQuotes(const std::string &s) {
  if (s.size() >= 2 && ((s.front() == '"' && s.back() == '"') ||
                        (s.front() == '\'' && s.back() == '\'')))
    return s.substr(1, s.size() - 2);
  return s;
}

std::optional<int64_t> parseInt(const std::string &s, int64_t lo, int64_t hi) {
  if (s.empty())
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (errno || *end || v < lo || v > hi)
    return std::nullopt;
  return v;
}

std::optional<uint64_t> parseUInt(const std::string &s, uint64_t hi) {
  if (s.empty() || s[0] == '-')
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (errno || *end || v > hi)
    return std::nullopt;
  return v;
}

std::optional<double> parseDouble(const std::string &s) {
  if (s.empty())
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (errno || *end || !std::isfinite(v))
    return std::nullopt;
  return v;
}

std::optional<bool> parseBool(const std::string &s) {
  std::string l = s;
  for (char &c : l)
    c = (char)std::tolower((unsigned char)c);
  if (l == "true" || l == "1")
    return true;
  if (l == "false" || l == "0")
    return false;
  return std::nullopt;
}

/// Suggestion for an override naming no field: a near sibling, else the
/// places a field of that name lives, else any near path.
std::string unknownOverrideField(const std::vector<std::string> &parts, size_t failAt,
                                 const pb::Descriptor *d) {
  std::vector<std::string> prefixParts(parts.begin(), parts.begin() + failAt);
  std::string prefix = join(prefixParts, ".");
  std::string given = join(parts, ".");
  std::string msg = "unknown field '" + given + "'";
  auto inSchema = [](const std::string &p) {
    return std::find(allPaths().begin(), allPaths().end(), p) != allPaths().end();
  };
  if (std::optional<std::string> near = nearest(parts[failAt], fieldNames(d))) {
    std::vector<std::string> fixed = parts;
    fixed[failAt] = *near;
    std::string candidate = join(fixed, ".");
    if (!inSchema(candidate))
      candidate = (prefix.empty() ? "" : prefix + ".") + *near;
    return msg + "; did you mean '" + candidate + "'?";
  }
  std::vector<std::string> rest(parts.begin() + failAt, parts.end());
  std::vector<std::string> elsewhere = pathsEndingIn(join(rest, "."));
  if (!elsewhere.empty())
    return msg + "; did you mean " + quoteAlternatives(elsewhere) + "?";
  if (std::optional<std::string> near = nearest(given, allPaths()))
    return msg + "; did you mean '" + *near + "'?";
  return msg + "; " +
         (prefix.empty() ? "the top-level fields are " : prefix + " has the fields ") +
         join(fieldNames(d), ", ");
}

/// Sets one field of `cfg` without validating. `error` gets a bare message.
bool setField(TrainConfig &cfg, const std::string &dotted, const std::string &rawValue,
              std::string &error) {
  std::string field = trim(dotted);
  std::string value = trim(rawValue);
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t dot = field.find('.', start);
    parts.push_back(field.substr(start, dot == std::string::npos ? dot : dot - start));
    if (dot == std::string::npos)
      break;
    start = dot + 1;
  }
  if (std::any_of(parts.begin(), parts.end(), [](auto &p) { return p.empty(); })) {
    error = "'" + field + "' is not a dotted field name (e.g. optimizer.adamw.lr)";
    return false;
  }

  pb::Message *msg = &cfg;
  for (size_t i = 0; i < parts.size(); ++i) {
    const pb::Descriptor *d = msg->GetDescriptor();
    const pb::Reflection *refl = msg->GetReflection();
    const FieldDescriptor *f = d->FindFieldByName(parts[i]);
    if (!f) {
      error = unknownOverrideField(parts, i, d);
      return false;
    }
    std::string name = join({parts.begin(), parts.begin() + i + 1}, ".");
    bool last = i + 1 == parts.size();

    if (f->is_map()) {
      if (i + 2 != parts.size()) {
        error = name + " is a map; name one key: " + name + ".KEY=VALUE";
        return false;
      }
      const std::string &key = parts[i + 1];
      if (f->name() == "shapes") {
        std::optional<int64_t> v = parseInt(value, std::numeric_limits<int64_t>::min(),
                                            std::numeric_limits<int64_t>::max());
        if (!v) {
          error = name + "." + key + " expects an integer, got '" + value + "'";
          return false;
        }
        (*cfg.mutable_shapes())[key] = *v;
      } else {
        (*cfg.mutable_set())[key] = stripQuotes(value);
      }
      return true;
    }
    if (f->is_repeated()) {
      error = name + " is a list and cannot be set by an override; set the whole '" +
              join({parts.begin(), parts.begin() + i}, ".") +
              "' instead, e.g. " + join({parts.begin(), parts.begin() + i}, ".") +
              "='" + f->name() + " { ... }'";
      return false;
    }
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!last) {
        msg = refl->MutableMessage(msg, f);
        continue;
      }
      // A whole message, in text format, with or without its braces.
      std::string body = value;
      if (body.size() >= 2 && body.front() == '{' && body.back() == '}')
        body = body.substr(1, body.size() - 2);
      std::unique_ptr<pb::Message> parsed(
          pb::MessageFactory::generated_factory()->GetPrototype(f->message_type())->New());
      Collector collector;
      pb::TextFormat::Parser parser;
      parser.RecordErrorsTo(&collector);
      if (!parser.ParseFromString(body, parsed.get())) {
        std::string why = "cannot parse it";
        if (!collector.entries.empty()) {
          SourceText source(body);
          int column1 = collector.entries[0].column + 1;
          why = rewriteParseError(collector.entries[0].message, {}, source,
                                  collector.entries[0].line, column1);
        }
        error = name + " expects a message in text format, e.g. " + name +
                "='{ ... }': " + why;
        return false;
      }
      refl->MutableMessage(msg, f)->CopyFrom(*parsed);
      return true;
    }
    if (!last) {
      error = name + " is not a message; it has no field '" + parts[i + 1] + "'";
      return false;
    }

    auto expect = [&](const std::string &what) {
      error = name + " expects " + what + ", got '" + value + "'";
      return false;
    };
    switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      auto v = parseInt(value, std::numeric_limits<int32_t>::min(),
                        std::numeric_limits<int32_t>::max());
      if (!v)
        return expect("an integer (32-bit)");
      refl->SetInt32(msg, f, (int32_t)*v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      auto v = parseInt(value, std::numeric_limits<int64_t>::min(),
                        std::numeric_limits<int64_t>::max());
      if (!v)
        return expect("an integer");
      refl->SetInt64(msg, f, *v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      auto v = parseUInt(value, std::numeric_limits<uint32_t>::max());
      if (!v)
        return expect("a non-negative integer (32-bit)");
      refl->SetUInt32(msg, f, (uint32_t)*v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      auto v = parseUInt(value, std::numeric_limits<uint64_t>::max());
      if (!v)
        return expect("a non-negative integer");
      refl->SetUInt64(msg, f, *v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      auto v = parseDouble(value);
      if (!v)
        return expect("a finite number");
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE)
        refl->SetDouble(msg, f, *v);
      else
        refl->SetFloat(msg, f, (float)*v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      auto v = parseBool(value);
      if (!v)
        return expect("true or false");
      refl->SetBool(msg, f, *v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumValueDescriptor *ev = f->enum_type()->FindValueByName(value);
      if (ev) {
        refl->SetEnum(msg, f, ev);
        return true;
      }
      std::vector<std::string> names = enumNames(f->enum_type());
      error = name + " expects one of " + join(names, ", ") + ", got '" + value + "'";
      if (std::optional<std::string> near = nearest(value, names))
        error += "; did you mean '" + *near + "'?";
      return false;
    }
    case FieldDescriptor::CPPTYPE_STRING:
      refl->SetString(msg, f, stripQuotes(value));
      return true;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
    }
  }
  error = "cannot set '" + field + "'";
  return false;
}

bool splitAssignment(const std::string &assignment, std::string &field,
                     std::string &value, std::string &error) {
  size_t eq = assignment.find('=');
  if (eq == std::string::npos) {
    error = "error: --set " + assignment + ": expected FIELD=VALUE, e.g. steps=20";
    return false;
  }
  field = trim(assignment.substr(0, eq));
  value = assignment.substr(eq + 1);
  if (field.empty()) {
    error = "error: --set " + assignment + ": expected FIELD=VALUE, e.g. steps=20";
    return false;
  }
  return true;
}

bool readFile(const std::string &path, std::string &text, std::string &error) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = path + ": error: cannot open the config file: " + std::strerror(errno);
    return false;
  }
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0)
    text.append(buf, n);
  bool failed = std::ferror(f);
  int err = errno;
  std::fclose(f);
  if (failed) {
    error = path + ": error: cannot read the config file: " + std::strerror(err);
    return false;
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

std::optional<TrainConfig> parseConfigText(const std::string &text,
                                           const std::string &displayPath,
                                           std::string &error) {
  SourceText source(text);
  Diagnostics diags(displayPath.empty() ? "<config>" : displayPath, &source);
  TrainConfig cfg;
  ParseInfoTree tree;
  if (!parseRaw(text, source, diags, cfg, tree)) {
    error = diags.take();
    return std::nullopt;
  }
  applyDefaults(cfg);
  if (!validate(cfg, &tree, diags)) {
    error = diags.take();
    return std::nullopt;
  }
  return cfg;
}

std::optional<TrainConfig> loadConfigFile(const std::string &path, std::string &error) {
  std::string text;
  if (!readFile(path, text, error))
    return std::nullopt;
  return parseConfigText(text, path, error);
}

bool mergeConfigText(TrainConfig &cfg, const std::string &text,
                     const std::string &displayPath, std::string &error, Base base) {
  SourceText source(text);
  Diagnostics diags(displayPath.empty() ? "<config>" : displayPath, &source);
  TrainConfig top;
  ParseInfoTree tree;
  if (!parseRaw(text, source, diags, top, tree)) {
    error = diags.take();
    return false;
  }
  TrainConfig merged = cfg;
  overlay(merged, top);
  applyDefaults(merged);
  if (base == Base::CompiledIn)
    checkCompiledFields(cfg, merged, &tree, diags);
  if (!validate(merged, &tree, diags)) {
    error = diags.take();
    return false;
  }
  cfg = std::move(merged);
  return true;
}

bool mergeConfigFile(TrainConfig &cfg, const std::string &path, std::string &error,
                     Base base) {
  std::string text;
  if (!readFile(path, text, error))
    return false;
  return mergeConfigText(cfg, text, path, error, base);
}

bool validateConfig(const TrainConfig &cfg, std::string &error) {
  Diagnostics diags("", nullptr);
  if (validate(cfg, nullptr, diags))
    return true;
  error = diags.take();
  return false;
}

bool applyOverride(TrainConfig &cfg, const std::string &dottedField,
                   const std::string &value, std::string &error, Base base) {
  Diagnostics diags("--set " + trim(dottedField) + "=" + trim(value), nullptr);
  TrainConfig updated = cfg;
  std::string why;
  if (!setField(updated, dottedField, value, why)) {
    diags.error(-1, -1, why);
    error = diags.take();
    return false;
  }
  applyDefaults(updated);
  if (base == Base::CompiledIn)
    checkCompiledFields(cfg, updated, nullptr, diags);
  if (!validate(updated, nullptr, diags)) {
    error = diags.take();
    return false;
  }
  cfg = std::move(updated);
  return true;
}

bool applyOverride(TrainConfig &cfg, const std::string &assignment, std::string &error,
                   Base base) {
  std::string field, value;
  if (!splitAssignment(assignment, field, value, error))
    return false;
  return applyOverride(cfg, field, value, error, base);
}

bool applyOverrides(TrainConfig &cfg, const std::vector<std::string> &assignments,
                    std::string &error, Base base) {
  TrainConfig updated = cfg;
  for (const std::string &assignment : assignments) {
    std::string field, value, why;
    if (!splitAssignment(assignment, field, value, error))
      return false;
    Diagnostics diags("--set " + field + "=" + trim(value), nullptr);
    if (!setField(updated, field, value, why))
      diags.error(-1, -1, why);
    else if (base == Base::CompiledIn) // here, so the message names the --set
      checkCompiledFields(cfg, updated, nullptr, diags);
    if (!diags.empty()) {
      error = diags.take();
      return false;
    }
  }
  applyDefaults(updated);
  if (!validateConfig(updated, error))
    return false;
  cfg = std::move(updated);
  return true;
}

int64_t accumulationSteps(const TrainConfig &cfg, int64_t worldSize, std::string &error) {
  int64_t global = cfg.batch().global();
  int64_t micro = cfg.batch().has_micro() ? cfg.batch().micro() : global;
  if (worldSize < 1) {
    error = "error: the world size (" + formatInt(worldSize) + ") must be at least 1";
    return -1;
  }
  if (global <= 0 || micro <= 0) {
    error = "error: batch.global (" + formatInt(global) + ") and batch.micro (" +
            formatInt(micro) + ") must be positive";
    return -1;
  }
  if (global % micro == 0 && (global / micro) % worldSize == 0)
    return global / micro / worldSize;

  std::string product;
  int64_t p;
  if (!__builtin_mul_overflow(micro, worldSize, &p))
    product = " = " + formatInt(p);
  error = "error: batch.global (" + formatInt(global) +
          ") is not divisible by batch.micro (" + formatInt(micro) +
          ") x world size (" + formatInt(worldSize) + ")" + product +
          "; accumulation steps = global / (micro x world size) must be a whole number";
  if (global % worldSize != 0) {
    error += "; " + formatInt(global) + " samples cannot be split evenly over " +
             formatInt(worldSize) + " ranks";
    if (global % micro == 0)
      error += " (with batch.micro " + formatInt(micro) +
               ", use a world size that divides " + formatInt(global / micro) + ")";
    return -1;
  }
  int64_t perRank = global / worldSize;
  error += "; each rank takes " + formatInt(perRank) + " samples per step";
  std::vector<int64_t> near = divisorsAround(perRank, micro);
  if (!near.empty())
    error += ", which batch.micro must divide (e.g. " + orList(near) + ")";
  return -1;
}

std::string resolveModelPath(const TrainConfig &cfg, const std::string &configPath) {
  namespace fs = std::filesystem;
  if (cfg.model().empty())
    return "";
  fs::path model(cfg.model());
  if (model.is_absolute())
    return model.string();
  fs::path dir = fs::path(configPath).parent_path();
  if (dir.empty())
    return model.lexically_normal().string();
  return (dir / model).lexically_normal().string();
}

} // namespace sinter::config
