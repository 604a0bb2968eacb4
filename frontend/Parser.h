//===- Parser.h - Recursive-descent parser for Sinter ---------------------===//
#ifndef SINTER_FRONTEND_PARSER_H
#define SINTER_FRONTEND_PARSER_H

#include "frontend/AST.h"
#include "frontend/Lexer.h"

namespace sinter {

/// Parses one file. The first syntax error is reported and parsing stops:
/// later errors in a broken file are rarely useful.
class Parser {
public:
  Parser(uint32_t file, const std::string &text, DiagnosticEngine &diags);
  /// Null after a syntax error (already reported).
  std::unique_ptr<ast::File> parseFile();

private:
  // Declarations.
  bool parseImport(ast::File &file);
  bool parseConst(ast::File &file);
  std::unique_ptr<ast::Def> parseDef();
  std::unique_ptr<ast::Model> parseModel();
  bool parseBlock(ast::Block &block, bool inModel);
  ast::StmtPtr parseStmt(bool inModel);
  // One statement each, from its first token.
  ast::StmtPtr parseInput(bool inModel);
  ast::StmtPtr parseParam();
  ast::StmtPtr parseLoss(bool inModel);
  ast::StmtPtr parseMetric(bool inModel);
  ast::StmtPtr parseReturn(bool inModel);
  /// A statement that starts with a name: a binding, a state update or
  /// `output NAME = EXPR`.
  ast::StmtPtr parseNameStmt(bool inModel);
  /// `output NAME = EXPR` after `output`, which started at `loc`.
  ast::StmtPtr parseOutput(Loc loc, bool inModel);
  ast::StmtPtr parseRepeat(bool inModel);
  ast::StmtPtr parseIf(bool inModel);
  bool parseType(ast::TypeExpr &type);

  // Expressions, loosest first.
  ast::ExprPtr parseExpr();
  ast::ExprPtr parseOr();
  ast::ExprPtr parseAnd();
  ast::ExprPtr parseNot();
  ast::ExprPtr parseComparison();
  ast::ExprPtr parseAdditive();
  ast::ExprPtr parseMultiplicative();
  ast::ExprPtr parseUnary();
  ast::ExprPtr parsePostfix();
  ast::ExprPtr parsePrimary();
  bool parseArgs(std::vector<ast::Arg> &args);

  // Token helpers.
  void consume();
  bool at(Tok kind) const { return tok_.kind == kind; }
  bool accept(Tok kind);
  bool expect(Tok kind, const char *context);
  bool fail(Loc loc, const std::string &message);
  bool enter(Loc loc);
  void leave() { --depth_; }

  Lexer lexer_;
  DiagnosticEngine &diags_;
  Token tok_;
  bool failed_ = false;
  unsigned depth_ = 0;
};

} // namespace sinter

#endif // SINTER_FRONTEND_PARSER_H
