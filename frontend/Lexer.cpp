//===- Lexer.cpp - Tokens of the Sinter language --------------------------===//

#include "frontend/Lexer.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace sinter {

const char *tokName(Tok kind) {
  switch (kind) {
  case Tok::Eof: return "end of file";
  case Tok::Error: return "invalid token";
  case Tok::Ident: return "identifier";
  case Tok::Int: return "integer";
  case Tok::Float: return "number";
  case Tok::String: return "string";
  case Tok::KwImport: return "'import'";
  case Tok::KwConst: return "'const'";
  case Tok::KwDef: return "'def'";
  case Tok::KwModel: return "'model'";
  case Tok::KwInput: return "'input'";
  case Tok::KwParam: return "'param'";
  case Tok::KwState: return "'state'";
  case Tok::KwReturn: return "'return'";
  case Tok::KwLoss: return "'loss'";
  case Tok::KwMetric: return "'metric'";
  case Tok::KwRepeat: return "'repeat'";
  case Tok::KwAs: return "'as'";
  case Tok::KwScope: return "'scope'";
  case Tok::KwIf: return "'if'";
  case Tok::KwElse: return "'else'";
  case Tok::KwAnd: return "'and'";
  case Tok::KwOr: return "'or'";
  case Tok::KwNot: return "'not'";
  case Tok::KwTrue: return "'true'";
  case Tok::KwFalse: return "'false'";
  case Tok::KwTraining: return "'training'";
  case Tok::LParen: return "'('";
  case Tok::RParen: return "')'";
  case Tok::LBracket: return "'['";
  case Tok::RBracket: return "']'";
  case Tok::LBrace: return "'{'";
  case Tok::RBrace: return "'}'";
  case Tok::Comma: return "','";
  case Tok::Colon: return "':'";
  case Tok::Dot: return "'.'";
  case Tok::Assign: return "'='";
  case Tok::Arrow: return "'<-'";
  case Tok::Plus: return "'+'";
  case Tok::Minus: return "'-'";
  case Tok::Star: return "'*'";
  case Tok::Slash: return "'/'";
  case Tok::SlashSlash: return "'//'";
  case Tok::Percent: return "'%'";
  case Tok::At: return "'@'";
  case Tok::Less: return "'<'";
  case Tok::LessEq: return "'<='";
  case Tok::Greater: return "'>'";
  case Tok::GreaterEq: return "'>='";
  case Tok::EqEq: return "'=='";
  case Tok::NotEq: return "'!='";
  }
  return "token";
}

Lexer::Lexer(uint32_t file, const std::string &text, DiagnosticEngine &diags)
    : file_(file), text_(text), diags_(diags) {}

char Lexer::peek(size_t ahead) const {
  return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
}

char Lexer::advance() {
  char c = text_[pos_++];
  if (c == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  return c;
}

Token Lexer::make(Tok kind, Loc loc) const {
  Token t;
  t.kind = kind;
  t.loc = loc;
  return t;
}

Token Lexer::error(Loc loc, const std::string &message) {
  diags_.error(loc, message);
  pos_ = text_.size(); // One lexical error ends the file.
  return make(Tok::Error, loc);
}

void Lexer::skipSpaceAndComments() {
  while (pos_ < text_.size()) {
    char c = peek();
    if (c == '#') {
      while (pos_ < text_.size() && peek() != '\n')
        advance();
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      advance();
    } else {
      return;
    }
  }
}

static bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool isDigit(char c) { return c >= '0' && c <= '9'; }

Token Lexer::lexNumber(Loc loc) {
  size_t start = pos_;
  bool isFloat = false;
  while (isDigit(peek()))
    advance();
  if (peek() == '.' && !isIdentStart(peek(1))) {
    // `3.` and `0.02` are floats; `x.shape` never starts with a digit.
    isFloat = true;
    advance();
    while (isDigit(peek()))
      advance();
  }
  if (peek() == 'e' || peek() == 'E') {
    size_t save = 1;
    if (peek(1) == '+' || peek(1) == '-')
      save = 2;
    if (isDigit(peek(save))) {
      isFloat = true;
      for (size_t i = 0; i < save; ++i)
        advance();
      while (isDigit(peek()))
        advance();
    }
  }
  if (isIdentStart(peek()))
    return error(loc, "invalid character '" + std::string(1, peek()) +
                          "' in a number");
  std::string spelling = text_.substr(start, pos_ - start);
  Token t = make(isFloat ? Tok::Float : Tok::Int, loc);
  t.text = spelling;
  errno = 0;
  if (isFloat) {
    t.floatValue = std::strtod(spelling.c_str(), nullptr);
    if (errno == ERANGE && std::isinf(t.floatValue))
      return error(loc, "number " + spelling + " is too large");
    return t;
  }
  t.intValue = std::strtoll(spelling.c_str(), nullptr, 10);
  if (errno == ERANGE)
    return error(loc, "integer " + spelling + " does not fit in 64 bits");
  return t;
}

Token Lexer::lexString(Loc loc) {
  advance(); // opening quote
  std::string value;
  while (true) {
    if (pos_ >= text_.size() || peek() == '\n')
      return error(loc, "unterminated string literal");
    char c = advance();
    if (c == '"')
      break;
    if (c != '\\') {
      value += c;
      continue;
    }
    Loc escLoc{file_, line_, col_ - 1};
    if (pos_ >= text_.size())
      return error(loc, "unterminated string literal");
    char e = advance();
    if (e == 'n')
      value += '\n';
    else if (e == '"' || e == '\\')
      value += e;
    else
      return error(escLoc, std::string("unknown escape sequence '\\") + e +
                               "'; use \\\", \\\\ or \\n");
  }
  Token t = make(Tok::String, loc);
  t.text = std::move(value);
  return t;
}

Token Lexer::lexIdentifier(Loc loc) {
  static const struct {
    const char *spelling;
    Tok kind;
  } keywords[] = {
      {"import", Tok::KwImport}, {"const", Tok::KwConst},
      {"def", Tok::KwDef},       {"model", Tok::KwModel},
      {"input", Tok::KwInput},   {"param", Tok::KwParam},
      {"state", Tok::KwState},   {"return", Tok::KwReturn},
      {"loss", Tok::KwLoss},     {"metric", Tok::KwMetric},
      {"repeat", Tok::KwRepeat}, {"as", Tok::KwAs},
      {"scope", Tok::KwScope},   {"if", Tok::KwIf},
      {"else", Tok::KwElse},     {"and", Tok::KwAnd},
      {"or", Tok::KwOr},         {"not", Tok::KwNot},
      {"true", Tok::KwTrue},     {"false", Tok::KwFalse},
      {"training", Tok::KwTraining},
  };
  size_t start = pos_;
  while (isIdentStart(peek()) || isDigit(peek()))
    advance();
  std::string word = text_.substr(start, pos_ - start);
  Tok kind = Tok::Ident;
  for (const auto &k : keywords)
    if (word == k.spelling)
      kind = k.kind;
  Token t = make(kind, loc);
  t.text = std::move(word);
  return t;
}

Token Lexer::next() {
  skipSpaceAndComments();
  Loc loc{file_, line_, col_};
  if (pos_ >= text_.size())
    return make(Tok::Eof, loc);
  char c = peek();
  if (isIdentStart(c))
    return lexIdentifier(loc);
  if (isDigit(c) || (c == '.' && isDigit(peek(1))))
    return lexNumber(loc);
  if (c == '"')
    return lexString(loc);

  auto one = [&](Tok kind) {
    advance();
    return make(kind, loc);
  };
  auto two = [&](Tok kind) {
    advance();
    advance();
    return make(kind, loc);
  };
  switch (c) {
  case '(': return one(Tok::LParen);
  case ')': return one(Tok::RParen);
  case '[': return one(Tok::LBracket);
  case ']': return one(Tok::RBracket);
  case '{': return one(Tok::LBrace);
  case '}': return one(Tok::RBrace);
  case ',': return one(Tok::Comma);
  case ':': return one(Tok::Colon);
  case '.': return one(Tok::Dot);
  case '+': return one(Tok::Plus);
  case '-': return one(Tok::Minus);
  case '*': return one(Tok::Star);
  case '%': return one(Tok::Percent);
  case '@': return one(Tok::At);
  case '/': return peek(1) == '/' ? two(Tok::SlashSlash) : one(Tok::Slash);
  case '=': return peek(1) == '=' ? two(Tok::EqEq) : one(Tok::Assign);
  case '>': return peek(1) == '=' ? two(Tok::GreaterEq) : one(Tok::Greater);
  case '<':
    if (peek(1) == '=')
      return two(Tok::LessEq);
    if (peek(1) == '-')
      return two(Tok::Arrow);
    return one(Tok::Less);
  case '!':
    if (peek(1) == '=')
      return two(Tok::NotEq);
    return error(loc, "unexpected '!'; write 'not' for negation");
  default:
    break;
  }
  unsigned char u = c;
  if (u < 32 || u >= 127)
    return error(loc, "unexpected byte 0x" +
                          std::string(1, "0123456789abcdef"[u >> 4]) +
                          std::string(1, "0123456789abcdef"[u & 15]) +
                          " in source");
  return error(loc, std::string("unexpected character '") + c + "'");
}

} // namespace sinter
