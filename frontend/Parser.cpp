//===- Parser.cpp - Recursive-descent parser for Sinter -------------------===//
//
// The token helpers and the top level of a file: imports, consts, defs,
// models, blocks and types. Statements are parsed in ParseStmts.cpp,
// expressions in ParseExprs.cpp.
//
//===----------------------------------------------------------------------===//

#include "frontend/Parser.h"
#include "frontend/ParserInternal.h"

namespace sinter {
using namespace ast;

/// Nesting deeper than this is certainly not a model; it would only exhaust
/// the stack.
static constexpr unsigned kMaxDepth = 200;

Parser::Parser(uint32_t file, const std::string &text, DiagnosticEngine &diags)
    : lexer_(file, text, diags), diags_(diags) {
  tok_ = lexer_.next();
  if (at(Tok::Error))
    failed_ = true;
}

void Parser::consume() {
  if (at(Tok::Eof) || at(Tok::Error))
    return;
  tok_ = lexer_.next();
  if (at(Tok::Error))
    failed_ = true;
}

bool Parser::accept(Tok kind) {
  if (!at(kind))
    return false;
  consume();
  return true;
}

bool Parser::fail(Loc loc, const std::string &message) {
  if (!failed_)
    diags_.error(loc, message);
  failed_ = true;
  return false;
}

std::string describe(const Token &t) {
  if (t.kind == Tok::Ident)
    return "'" + t.text + "'";
  if (t.kind == Tok::Int || t.kind == Tok::Float)
    return "number " + t.text;
  if (t.kind == Tok::String)
    return "a string";
  return tokName(t.kind);
}

bool Parser::expect(Tok kind, const char *context) {
  if (accept(kind))
    return true;
  return fail(tok_.loc, std::string("expected ") + tokName(kind) + " " +
                            context + ", found " + describe(tok_));
}

bool Parser::enter(Loc loc) {
  if (++depth_ > kMaxDepth)
    return fail(loc, "nesting is too deep (more than " +
                         std::to_string(kMaxDepth) + " levels)");
  return true;
}

std::unique_ptr<File> Parser::parseFile() {
  auto file = std::make_unique<File>();
  while (!failed_ && !at(Tok::Eof)) {
    switch (tok_.kind) {
    case Tok::KwImport:
      parseImport(*file);
      break;
    case Tok::KwConst:
      parseConst(*file);
      break;
    case Tok::KwDef:
      if (auto def = parseDef())
        file->defs.push_back(std::move(def));
      break;
    case Tok::KwModel:
      if (auto model = parseModel())
        file->models.push_back(std::move(model));
      break;
    default:
      fail(tok_.loc, "expected 'import', 'const', 'def' or 'model' at the top "
                     "level, found " + describe(tok_));
    }
  }
  if (failed_)
    return nullptr;
  return file;
}

bool Parser::parseImport(File &file) {
  Loc loc = tok_.loc;
  consume();
  if (!at(Tok::String))
    return fail(tok_.loc, "expected a file name in quotes after 'import'");
  file.imports.push_back({loc, tok_.text});
  consume();
  return true;
}

bool Parser::parseConst(File &file) {
  Loc loc = tok_.loc;
  consume();
  if (!at(Tok::Ident))
    return fail(tok_.loc, "expected a name after 'const', found " +
                              describe(tok_));
  std::string name = tok_.text;
  consume();
  if (!expect(Tok::Assign, "after the constant's name"))
    return false;
  ExprPtr value = parseExpr();
  if (!value)
    return false;
  file.consts.push_back({loc, name, std::move(value)});
  return true;
}

std::unique_ptr<Def> Parser::parseDef() {
  auto def = std::make_unique<Def>();
  def->loc = tok_.loc;
  consume();
  if (!at(Tok::Ident)) {
    fail(tok_.loc, "expected a function name after 'def', found " +
                       describe(tok_));
    return nullptr;
  }
  def->name = tok_.text;
  consume();
  if (!expect(Tok::LParen, "after the function name"))
    return nullptr;
  while (!at(Tok::RParen)) {
    DefParam p;
    p.loc = tok_.loc;
    if (!at(Tok::Ident)) {
      fail(tok_.loc, "expected a parameter name, found " + describe(tok_));
      return nullptr;
    }
    p.name = tok_.text;
    consume();
    if (accept(Tok::Colon)) {
      if (!at(Tok::Ident) || (tok_.text != "int" && tok_.text != "float" &&
                              tok_.text != "bool" && tok_.text != "string")) {
        fail(tok_.loc, "expected 'int', 'float', 'bool' or 'string' after ':' "
                       "(tensor arguments take no annotation)");
        return nullptr;
      }
      p.kind = tok_.text;
      consume();
    }
    if (accept(Tok::Assign)) {
      p.defaultValue = parseExpr();
      if (!p.defaultValue)
        return nullptr;
    }
    def->params.push_back(std::move(p));
    if (!accept(Tok::Comma))
      break;
  }
  if (!expect(Tok::RParen, "to close the parameter list") ||
      !parseBlock(def->body, /*inModel=*/false))
    return nullptr;
  return def;
}

std::unique_ptr<Model> Parser::parseModel() {
  auto model = std::make_unique<Model>();
  model->loc = tok_.loc;
  consume();
  if (!at(Tok::Ident)) {
    fail(tok_.loc, "expected a model name after 'model', found " +
                       describe(tok_));
    return nullptr;
  }
  model->name = tok_.text;
  consume();
  if (!parseBlock(model->body, /*inModel=*/true))
    return nullptr;
  return model;
}

bool Parser::parseBlock(Block &block, bool inModel) {
  Loc open = tok_.loc;
  if (!expect(Tok::LBrace, "to open a block") || !enter(open))
    return false;
  while (!failed_ && !at(Tok::RBrace)) {
    if (at(Tok::Eof)) {
      fail(open, "this '{' is never closed");
      break;
    }
    if (StmtPtr s = parseStmt(inModel))
      block.push_back(std::move(s));
  }
  leave();
  return !failed_ && expect(Tok::RBrace, "to close the block");
}

bool Parser::parseType(TypeExpr &type) {
  type.loc = tok_.loc;
  if (!at(Tok::Ident))
    return fail(tok_.loc, "expected a type such as f32[B, 64], found " +
                              describe(tok_));
  type.dtype = tok_.text;
  consume();
  if (!expect(Tok::LBracket, "after the element type (write f32[] for a "
                             "scalar)"))
    return false;
  while (!at(Tok::RBracket)) {
    ExprPtr dim = parseExpr();
    if (!dim)
      return false;
    type.dims.push_back(std::move(dim));
    if (!accept(Tok::Comma))
      break;
  }
  return expect(Tok::RBracket, "to close the shape");
}

} // namespace sinter
