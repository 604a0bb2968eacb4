//===- Lexer.h - Tokens of the Sinter language ----------------------------===//
#ifndef SINTER_FRONTEND_LEXER_H
#define SINTER_FRONTEND_LEXER_H

#include "frontend/Diagnostics.h"

#include <string>

namespace sinter {

enum class Tok {
  Eof,
  Error,
  Ident,
  Int,
  Float,
  String,
  // Keywords.
  KwImport, KwConst, KwDef, KwModel, KwInput, KwParam, KwState, KwReturn,
  KwLoss, KwMetric, KwRepeat, KwAs, KwScope, KwIf, KwElse, KwAnd, KwOr,
  KwNot, KwTrue, KwFalse, KwTraining,
  // Punctuation and operators.
  LParen, RParen, LBracket, RBracket, LBrace, RBrace, Comma, Colon, Dot,
  Assign,   // =
  Arrow,    // <-
  Plus, Minus, Star, Slash, SlashSlash, Percent, At,
  Less, LessEq, Greater, GreaterEq, EqEq, NotEq,
};

/// A printable name of a token kind, for "expected X" messages.
const char *tokName(Tok kind);

struct Token {
  Tok kind = Tok::Eof;
  Loc loc;
  std::string text;   // identifier, keyword or decoded string literal
  int64_t intValue = 0;
  double floatValue = 0;
};

/// Splits one source file into tokens. Errors (bad characters, unterminated
/// strings, integer overflow) are reported once and yield a Tok::Error.
class Lexer {
public:
  Lexer(uint32_t file, const std::string &text, DiagnosticEngine &diags);
  Token next();

private:
  Token make(Tok kind, Loc loc) const;
  Token error(Loc loc, const std::string &message);
  Token lexNumber(Loc loc);
  Token lexString(Loc loc);
  Token lexIdentifier(Loc loc);
  void skipSpaceAndComments();
  char peek(size_t ahead = 0) const;
  char advance();

  uint32_t file_;
  const std::string &text_;
  DiagnosticEngine &diags_;
  size_t pos_ = 0;
  uint32_t line_ = 1;
  uint32_t col_ = 1;
};

} // namespace sinter

#endif // SINTER_FRONTEND_LEXER_H
