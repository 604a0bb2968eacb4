//===- ConfigOverrides.cpp - Overrides (--set FIELD=VALUE) ----------------===//
//
// Sets one field by its dotted path: walks the path through the messages,
// then parses the value for the field's type.
//
//===----------------------------------------------------------------------===//

#include "runtime/config/ConfigInternals.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>

namespace sinter::config::detail {

static std::string stripQuotes(const std::string &s) {
  if (s.size() >= 2 && ((s.front() == '"' && s.back() == '"') ||
                        (s.front() == '\'' && s.back() == '\'')))
    return s.substr(1, s.size() - 2);
  return s;
}

static std::optional<int64_t> parseInt(const std::string &s, int64_t lo, int64_t hi) {
  if (s.empty())
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (errno || *end || v < lo || v > hi)
    return std::nullopt;
  return v;
}

static std::optional<uint64_t> parseUInt(const std::string &s, uint64_t hi) {
  if (s.empty() || s[0] == '-')
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (errno || *end || v > hi)
    return std::nullopt;
  return v;
}

static std::optional<double> parseDouble(const std::string &s) {
  if (s.empty())
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (errno || *end || !std::isfinite(v))
    return std::nullopt;
  return v;
}

static std::optional<bool> parseBool(const std::string &s) {
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
static std::string unknownOverrideField(const std::vector<std::string> &parts,
                                        size_t failAt, const pb::Descriptor *d) {
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

/// `field` split at its dots; nullopt when a part is empty.
static std::optional<std::vector<std::string>> splitDotted(const std::string &field) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t dot = field.find('.', start);
    parts.push_back(field.substr(start, dot == std::string::npos ? dot : dot - start));
    if (dot == std::string::npos)
      break;
    start = dot + 1;
  }
  if (std::any_of(parts.begin(), parts.end(), [](auto &p) { return p.empty(); }))
    return std::nullopt;
  return parts;
}

/// Sets the entry `key` of a map (`set` or `shapes`, both at the top level).
static bool setMapEntry(TrainConfig &cfg, const FieldDescriptor *f, const std::string &name,
                        const std::string &key, const std::string &value,
                        std::string &error) {
  if (f->name() != "shapes") {
    (*cfg.mutable_set())[key] = stripQuotes(value);
    return true;
  }
  std::optional<int64_t> v = parseInt(value, std::numeric_limits<int64_t>::min(),
                                      std::numeric_limits<int64_t>::max());
  if (!v) {
    error = name + "." + key + " expects an integer, got '" + value + "'";
    return false;
  }
  (*cfg.mutable_shapes())[key] = *v;
  return true;
}

/// Replaces the message field `f` of `msg` by `value`, a whole message in
/// text format.
static bool setMessage(pb::Message &msg, const FieldDescriptor *f, const std::string &name,
                       const std::string &value, std::string &error) {
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
  msg.GetReflection()->MutableMessage(&msg, f)->CopyFrom(*parsed);
  return true;
}

/// Sets the scalar field `f` of `msg` from `value`, read as the field's type.
static bool setScalar(pb::Message &msg, const FieldDescriptor *f, const std::string &name,
                      const std::string &value, std::string &error) {
  const pb::Reflection *refl = msg.GetReflection();
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
    refl->SetInt32(&msg, f, (int32_t)*v);
    return true;
  }
  case FieldDescriptor::CPPTYPE_INT64: {
    auto v = parseInt(value, std::numeric_limits<int64_t>::min(),
                      std::numeric_limits<int64_t>::max());
    if (!v)
      return expect("an integer");
    refl->SetInt64(&msg, f, *v);
    return true;
  }
  case FieldDescriptor::CPPTYPE_UINT32: {
    auto v = parseUInt(value, std::numeric_limits<uint32_t>::max());
    if (!v)
      return expect("a non-negative integer (32-bit)");
    refl->SetUInt32(&msg, f, (uint32_t)*v);
    return true;
  }
  case FieldDescriptor::CPPTYPE_UINT64: {
    auto v = parseUInt(value, std::numeric_limits<uint64_t>::max());
    if (!v)
      return expect("a non-negative integer");
    refl->SetUInt64(&msg, f, *v);
    return true;
  }
  case FieldDescriptor::CPPTYPE_DOUBLE:
  case FieldDescriptor::CPPTYPE_FLOAT: {
    auto v = parseDouble(value);
    if (!v)
      return expect("a finite number");
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE)
      refl->SetDouble(&msg, f, *v);
    else
      refl->SetFloat(&msg, f, (float)*v);
    return true;
  }
  case FieldDescriptor::CPPTYPE_BOOL: {
    auto v = parseBool(value);
    if (!v)
      return expect("true or false");
    refl->SetBool(&msg, f, *v);
    return true;
  }
  case FieldDescriptor::CPPTYPE_ENUM: {
    const pb::EnumValueDescriptor *ev = f->enum_type()->FindValueByName(value);
    if (ev) {
      refl->SetEnum(&msg, f, ev);
      return true;
    }
    std::vector<std::string> names = enumNames(f->enum_type());
    error = name + " expects one of " + join(names, ", ") + ", got '" + value + "'";
    if (std::optional<std::string> near = nearest(value, names))
      error += "; did you mean '" + *near + "'?";
    return false;
  }
  case FieldDescriptor::CPPTYPE_STRING:
    refl->SetString(&msg, f, stripQuotes(value));
    return true;
  case FieldDescriptor::CPPTYPE_MESSAGE:
    break;
  }
  // `name` is the whole dotted field here: a scalar ends the path.
  error = "cannot set '" + name + "'";
  return false;
}

/// Sets one field of `cfg` without validating. `error` gets a bare message.
/// Walks the dotted path through the messages, selecting a oneof member on
/// the way, then sets the map entry, message or scalar it ends at.
bool setField(TrainConfig &cfg, const std::string &dotted, const std::string &rawValue,
              std::string &error) {
  std::string field = trim(dotted);
  std::string value = trim(rawValue);
  std::optional<std::vector<std::string>> split = splitDotted(field);
  if (!split) {
    error = "'" + field + "' is not a dotted field name (e.g. optimizer.adamw.lr)";
    return false;
  }
  const std::vector<std::string> &parts = *split;

  pb::Message *msg = &cfg;
  for (size_t i = 0; i < parts.size(); ++i) {
    const pb::Descriptor *d = msg->GetDescriptor();
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
      return setMapEntry(cfg, f, name, parts[i + 1], value, error);
    }
    if (f->is_repeated()) {
      error = name + " is a list and cannot be set by an override; set the whole '" +
              join({parts.begin(), parts.begin() + i}, ".") +
              "' instead, e.g. " + join({parts.begin(), parts.begin() + i}, ".") +
              "='" + f->name() + " { ... }'";
      return false;
    }
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (last)
        return setMessage(*msg, f, name, value, error);
      msg = msg->GetReflection()->MutableMessage(msg, f);
      continue;
    }
    if (!last) {
      error = name + " is not a message; it has no field '" + parts[i + 1] + "'";
      return false;
    }
    return setScalar(*msg, f, name, value, error);
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

} // namespace sinter::config::detail
