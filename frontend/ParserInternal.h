//===- ParserInternal.h - What the parser's files share ---------*- C++ -*-===//
//
// Private to Parser.cpp, ParseStmts.cpp and ParseExprs.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_FRONTEND_PARSERINTERNAL_H
#define SINTER_FRONTEND_PARSERINTERNAL_H

#include "frontend/Lexer.h"

#include <string>

namespace sinter {

/// How a token is named in a syntax error: "'name'", "number 3", ...
/// (Parser.cpp).
std::string describe(const Token &t);

} // namespace sinter

#endif // SINTER_FRONTEND_PARSERINTERNAL_H
