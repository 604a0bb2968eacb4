//===- ConfigParse.cpp - Parsing, with protobuf's errors rewritten --------===//
//
// Parsing is protobuf's TextFormat::Parser; its errors are rewritten to
// name the dotted field, point at the offending token and suggest the
// nearest field or value.
//
//===----------------------------------------------------------------------===//

#include "runtime/config/ConfigInternals.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace sinter::config::detail {

/// "set" for a map entry, "data.train.npy[1]" otherwise; "" at the top.
static std::string contextName(const FieldPath &open) {
  std::string out;
  for (const PathStep &step : open) {
    out += (out.empty() ? "" : ".") + step.field->name();
    if (step.index >= 0 && !step.field->is_map())
      out += "[" + std::to_string(step.index) + "]";
  }
  return out;
}

static std::string unknownFieldMessage(const std::string &name, const pb::Descriptor *d,
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
static int startOfToken(const SourceText &source, int line0, int column1,
                        const std::string &token) {
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

} // namespace sinter::config::detail
