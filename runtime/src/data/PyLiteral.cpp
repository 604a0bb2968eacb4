//===- PyLiteral.cpp - The Python literals of a .npy header ---------------===//

#include "data/PyLiteral.h"

#include "support/Format.h"

#include <set>

namespace sinter::rt {
namespace {

/// Nesting deeper than this is not a numpy header; the limit keeps hostile
/// input from exhausting the stack.
constexpr int kMaxDepth = 16;

class Parser {
public:
  explicit Parser(std::string_view text) : text(text) {}

  Expected<PyLiteral> parseAll() {
    PyLiteral v;
    SINTER_RT_RETURN_IF_ERROR(parseValue(v, 0));
    skipSpace();
    if (pos != text.size())
      return fail("expected the end of the header after the literal");
    return v;
  }

private:
  std::string_view text;
  size_t pos = 0;

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  std::string found() const {
    if (pos >= text.size())
      return "the end of the header";
    return quoteForMessage(text.substr(pos), 12);
  }

  Status fail(const std::string &what) const {
    return Status::error(what + " at byte " + std::to_string(pos) + ", found " + found());
  }

  bool startsWith(std::string_view word) const {
    return text.substr(pos, word.size()) == word;
  }

  bool isIdentChar(char c) const {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
  }

  /// `word` as a whole identifier at pos.
  bool keyword(std::string_view word) {
    if (!startsWith(word))
      return false;
    size_t end = pos + word.size();
    if (end < text.size() && isIdentChar(text[end]))
      return false;
    pos = end;
    return true;
  }

  Status parseValue(PyLiteral &out, int depth) {
    if (depth > kMaxDepth)
      return fail("literals nested more than " + std::to_string(kMaxDepth) + " deep");
    skipSpace();
    if (pos >= text.size())
      return fail("expected a value");
    char c = text[pos];
    if (c == '\'' || c == '"') {
      out.kind = PyLiteral::Kind::String;
      return parseString(out.str);
    }
    if (c == '-' || c == '+' || (c >= '0' && c <= '9'))
      return parseInt(out);
    if (c == '(' || c == '[')
      return parseSequence(out, depth);
    if (c == '{')
      return parseDict(out, depth);
    if (keyword("True") || keyword("False")) {
      out.kind = PyLiteral::Kind::Bool;
      out.boolean = text[pos - 4] == 'T';
      return Status::success();
    }
    if (keyword("None")) {
      out.kind = PyLiteral::Kind::None;
      return Status::success();
    }
    return fail("expected a string, an integer, True, False, None, a tuple, a list or a dict");
  }

  Status parseString(std::string &out) {
    char quote = text[pos++];
    while (pos < text.size() && text[pos] != quote) {
      char c = text[pos];
      if (c == '\n')
        return fail("unterminated string");
      if (c == '\\') {
        if (pos + 1 >= text.size())
          return fail("unterminated string");
        char e = text[pos + 1];
        switch (e) {
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        default:
          return fail("unsupported escape sequence in a string (expected \\\\, \\', \\\", \\n or \\t)");
        }
        pos += 2;
        continue;
      }
      out += c;
      ++pos;
    }
    if (pos >= text.size())
      return fail("unterminated string");
    ++pos;
    return Status::success();
  }

  Status parseInt(PyLiteral &out) {
    out.kind = PyLiteral::Kind::Int;
    if (text[pos] == '-' || text[pos] == '+') {
      out.negative = text[pos] == '-';
      ++pos;
      skipSpace();
    }
    if (pos >= text.size() || text[pos] < '0' || text[pos] > '9')
      return fail("expected digits");
    size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      uint64_t digit = (uint64_t)(text[pos] - '0');
      uint64_t m;
      if (__builtin_mul_overflow(out.magnitude, (uint64_t)10, &m) ||
          __builtin_add_overflow(m, digit, &out.magnitude))
        out.tooBig = true;
      ++pos;
    }
    if (pos - start > 1 && text[start] == '0')
      return fail("leading zeros are not allowed in a Python integer");
    if (pos < text.size() && (text[pos] == 'L' || text[pos] == 'l'))
      ++pos; // Python 2 long suffix; numpy strips it too
    if (pos < text.size() && (text[pos] == '.' || text[pos] == 'e' || text[pos] == 'E' ||
                              isIdentChar(text[pos])))
      return fail("expected an integer");
    if (out.negative && out.magnitude == 0)
      out.negative = false;
    return Status::success();
  }

  Status parseSequence(PyLiteral &out, int depth) {
    char close = text[pos] == '(' ? ')' : ']';
    bool isTuple = close == ')';
    ++pos;
    std::vector<PyLiteral> items;
    bool sawComma = false;
    while (true) {
      skipSpace();
      if (pos < text.size() && text[pos] == close) {
        ++pos;
        break;
      }
      PyLiteral item;
      SINTER_RT_RETURN_IF_ERROR(parseValue(item, depth + 1));
      items.push_back(std::move(item));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        sawComma = true;
        continue;
      }
      if (pos < text.size() && text[pos] == close) {
        ++pos;
        break;
      }
      return fail(std::string("expected ',' or '") + close + "'");
    }
    // "(x)" is a parenthesised x in Python, not a tuple.
    if (isTuple && items.size() == 1 && !sawComma) {
      out = std::move(items[0]);
      return Status::success();
    }
    out.kind = isTuple ? PyLiteral::Kind::Tuple : PyLiteral::Kind::List;
    out.items = std::move(items);
    return Status::success();
  }

  Status parseDict(PyLiteral &out, int depth) {
    ++pos;
    out.kind = PyLiteral::Kind::Dict;
    std::set<std::string> keys;
    while (true) {
      skipSpace();
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return Status::success();
      }
      if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
        return fail("expected a string key or '}'");
      std::string key;
      SINTER_RT_RETURN_IF_ERROR(parseString(key));
      skipSpace();
      if (pos >= text.size() || text[pos] != ':')
        return fail("expected ':' after the key " + quoteForMessage(key));
      ++pos;
      PyLiteral value;
      SINTER_RT_RETURN_IF_ERROR(parseValue(value, depth + 1));
      // A set, not a scan of the entries: a hostile header may hold
      // millions of keys.
      if (!keys.insert(key).second)
        return fail("the key " + quoteForMessage(key) + " appears twice");
      out.entries.emplace_back(std::move(key), std::move(value));
      skipSpace();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        return Status::success();
      }
      return fail("expected ',' or '}'");
    }
  }
};

} // namespace

const char *PyLiteral::describe() const {
  switch (kind) {
  case Kind::String: return "a string";
  case Kind::Int: return "an integer";
  case Kind::Bool: return "a bool";
  case Kind::None: return "None";
  case Kind::Tuple: return "a tuple";
  case Kind::List: return "a list";
  case Kind::Dict: return "a dict";
  }
  return "a value";
}

std::string PyLiteral::repr() const {
  switch (kind) {
  case Kind::String:
    return quoteForMessage(str, 40);
  case Kind::Int:
    if (tooBig)
      return std::string(negative ? "-" : "") + "(an integer over 64 bits)";
    return (negative ? "-" : "") + std::to_string(magnitude);
  case Kind::Bool:
    return boolean ? "True" : "False";
  case Kind::None:
    return "None";
  case Kind::Tuple:
  case Kind::List: {
    std::string s = kind == Kind::Tuple ? "(" : "[";
    for (size_t i = 0; i < items.size() && i < 8; ++i)
      s += (i ? ", " : "") + items[i].repr();
    if (items.size() > 8)
      s += ", ...";
    if (kind == Kind::Tuple && items.size() == 1)
      s += ",";
    return s + (kind == Kind::Tuple ? ")" : "]");
  }
  case Kind::Dict:
    return "{...}";
  }
  return "?";
}

Expected<PyLiteral> parsePyLiteral(std::string_view text) {
  return Parser(text).parseAll();
}

} // namespace sinter::rt
