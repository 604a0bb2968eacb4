//===- Parser.cpp - Recursive-descent parser for Sinter -------------------===//

#include "frontend/Parser.h"

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

static std::string describe(const Token &t) {
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

StmtPtr Parser::parseStmt(bool inModel) {
  Loc loc = tok_.loc;
  switch (tok_.kind) {
  case Tok::KwInput:
    return parseInput(inModel);
  case Tok::KwParam:
  case Tok::KwState:
    return parseParam();
  case Tok::KwLoss:
    return parseLoss(inModel);
  case Tok::KwMetric:
    return parseMetric(inModel);
  case Tok::KwRepeat:
    return parseRepeat(inModel);
  case Tok::KwIf:
    return parseIf(inModel);
  case Tok::KwReturn:
    return parseReturn(inModel);
  case Tok::Ident:
    return parseNameStmt(inModel);
  case Tok::KwImport:
  case Tok::KwConst:
  case Tok::KwDef:
  case Tok::KwModel:
    fail(loc, std::string(tokName(tok_.kind)) +
                  " is only allowed at the top level of a file");
    return nullptr;
  default:
    fail(loc, "expected a statement, found " + describe(tok_));
    return nullptr;
  }
}

StmtPtr Parser::parseInput(bool inModel) {
  Loc loc = tok_.loc;
  if (!inModel) {
    fail(loc, "'input' is only allowed in a model, not in a def");
    return nullptr;
  }
  consume();
  if (!at(Tok::Ident)) {
    fail(tok_.loc, "expected an input name, found " + describe(tok_));
    return nullptr;
  }
  std::string name = tok_.text;
  consume();
  TypeExpr type;
  if (!expect(Tok::Colon, "after the input's name") || !parseType(type))
    return nullptr;
  return std::make_unique<InputStmt>(loc, name, std::move(type));
}

StmtPtr Parser::parseParam() {
  Loc loc = tok_.loc;
  bool isState = at(Tok::KwState);
  consume();
  if (!at(Tok::Ident)) {
    fail(tok_.loc, std::string("expected a name after '") +
                       (isState ? "state" : "param") + "', found " +
                       describe(tok_));
    return nullptr;
  }
  std::string name = tok_.text;
  consume();
  TypeExpr type;
  if (!expect(Tok::Colon, "after the name") || !parseType(type) ||
      !expect(Tok::Assign, "before the initialiser (e.g. '= zeros')"))
    return nullptr;
  ExprPtr init = parseExpr();
  if (!init)
    return nullptr;
  return std::make_unique<ParamStmt>(loc, isState, name, std::move(type),
                                     std::move(init));
}

StmtPtr Parser::parseLoss(bool inModel) {
  Loc loc = tok_.loc;
  if (!inModel) {
    fail(loc, "'loss' is only allowed in a model; return the value from the "
              "def instead");
    return nullptr;
  }
  consume();
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  return std::make_unique<LossStmt>(loc, std::move(value));
}

StmtPtr Parser::parseMetric(bool inModel) {
  Loc loc = tok_.loc;
  if (!inModel) {
    fail(loc, "'metric' is only allowed in a model");
    return nullptr;
  }
  consume();
  if (!at(Tok::Ident)) {
    fail(tok_.loc, "expected a metric name, found " + describe(tok_));
    return nullptr;
  }
  std::string name = tok_.text;
  consume();
  if (!expect(Tok::Assign, "after the metric's name"))
    return nullptr;
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  return std::make_unique<MetricStmt>(loc, name, std::move(value));
}

StmtPtr Parser::parseReturn(bool inModel) {
  Loc loc = tok_.loc;
  if (inModel) {
    fail(loc, "'return' is only allowed in a def");
    return nullptr;
  }
  consume();
  std::vector<ExprPtr> values;
  do {
    ExprPtr v = parseExpr();
    if (!v)
      return nullptr;
    values.push_back(std::move(v));
  } while (accept(Tok::Comma));
  return std::make_unique<ReturnStmt>(loc, std::move(values));
}

StmtPtr Parser::parseNameStmt(bool inModel) {
  Loc loc = tok_.loc;
  std::vector<std::string> targets = {tok_.text};
  std::vector<Loc> targetLocs = {tok_.loc};
  consume();
  // `output NAME = EXPR`; `output` followed by anything else is a name.
  if (targets[0] == "output" && at(Tok::Ident))
    return parseOutput(loc, inModel);
  if (accept(Tok::Arrow)) {
    ExprPtr value = parseExpr();
    if (!value)
      return nullptr;
    return std::make_unique<StateUpdateStmt>(loc, targets[0],
                                             std::move(value));
  }
  while (accept(Tok::Comma)) {
    if (!at(Tok::Ident)) {
      fail(tok_.loc, "expected a name to bind, found " + describe(tok_));
      return nullptr;
    }
    targets.push_back(tok_.text);
    targetLocs.push_back(tok_.loc);
    consume();
  }
  if (!at(Tok::Assign)) {
    fail(tok_.loc, "expected '=' or '<-' after '" + targets.back() +
                       "', found " + describe(tok_) +
                       " (a statement binds a name, e.g. 'h = relu(x)')");
    return nullptr;
  }
  consume();
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  return std::make_unique<AssignStmt>(loc, std::move(targets),
                                      std::move(targetLocs), std::move(value));
}

StmtPtr Parser::parseOutput(Loc loc, bool inModel) {
  if (!inModel) {
    fail(loc, "'output' is only allowed in a model");
    return nullptr;
  }
  std::string name = tok_.text;
  consume();
  if (!expect(Tok::Assign, "after the output's name"))
    return nullptr;
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  return std::make_unique<OutputStmt>(loc, name, std::move(value));
}

StmtPtr Parser::parseRepeat(bool inModel) {
  auto stmt = std::make_unique<RepeatStmt>(tok_.loc);
  consume();
  stmt->count = parseExpr();
  if (!stmt->count)
    return nullptr;
  stmt->scope = "repeat";
  if (accept(Tok::KwAs)) {
    if (!at(Tok::Ident)) {
      fail(tok_.loc, "expected a loop variable after 'as', found " +
                         describe(tok_));
      return nullptr;
    }
    stmt->var = tok_.text;
    consume();
  }
  if (accept(Tok::KwScope)) {
    if (!at(Tok::String)) {
      fail(tok_.loc, "expected a scope name in quotes after 'scope'");
      return nullptr;
    }
    stmt->scope = tok_.text;
    consume();
  }
  if (!parseBlock(stmt->body, inModel))
    return nullptr;
  return stmt;
}

StmtPtr Parser::parseIf(bool inModel) {
  auto stmt = std::make_unique<IfStmt>(tok_.loc);
  if (!enter(tok_.loc))
    return nullptr;
  consume();
  stmt->cond = parseExpr();
  bool ok = stmt->cond && parseBlock(stmt->thenBody, inModel);
  if (ok && accept(Tok::KwElse)) {
    if (at(Tok::KwIf)) {
      StmtPtr nested = parseIf(inModel);
      ok = nested != nullptr;
      if (ok)
        stmt->elseBody.push_back(std::move(nested));
    } else {
      ok = parseBlock(stmt->elseBody, inModel);
    }
  }
  leave();
  if (!ok)
    return nullptr;
  return stmt;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ExprPtr Parser::parseExpr() {
  if (!enter(tok_.loc))
    return nullptr;
  ExprPtr e = parseOr();
  leave();
  return e;
}

ExprPtr Parser::parseOr() {
  ExprPtr lhs = parseAnd();
  while (lhs && at(Tok::KwOr)) {
    Loc loc = tok_.loc;
    consume();
    ExprPtr rhs = parseAnd();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, BinaryOp::Or, std::move(lhs),
                                       std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseAnd() {
  ExprPtr lhs = parseNot();
  while (lhs && at(Tok::KwAnd)) {
    Loc loc = tok_.loc;
    consume();
    ExprPtr rhs = parseNot();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, BinaryOp::And, std::move(lhs),
                                       std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseNot() {
  if (!at(Tok::KwNot))
    return parseComparison();
  Loc loc = tok_.loc;
  consume();
  if (!enter(loc))
    return nullptr;
  ExprPtr operand = parseNot();
  leave();
  if (!operand)
    return nullptr;
  return std::make_unique<UnaryExpr>(loc, UnaryOp::Not, std::move(operand));
}

static bool comparisonOp(Tok kind, BinaryOp &op) {
  switch (kind) {
  case Tok::Less: op = BinaryOp::Lt; return true;
  case Tok::LessEq: op = BinaryOp::Le; return true;
  case Tok::Greater: op = BinaryOp::Gt; return true;
  case Tok::GreaterEq: op = BinaryOp::Ge; return true;
  case Tok::EqEq: op = BinaryOp::Eq; return true;
  case Tok::NotEq: op = BinaryOp::Ne; return true;
  default: return false;
  }
}

ExprPtr Parser::parseComparison() {
  ExprPtr lhs = parseAdditive();
  BinaryOp op;
  if (!lhs || !comparisonOp(tok_.kind, op))
    return lhs;
  Loc loc = tok_.loc;
  consume();
  ExprPtr rhs = parseAdditive();
  if (!rhs)
    return nullptr;
  BinaryOp chained;
  if (comparisonOp(tok_.kind, chained)) {
    fail(tok_.loc, "comparisons do not chain; combine them with 'and'");
    return nullptr;
  }
  return std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
}

ExprPtr Parser::parseAdditive() {
  ExprPtr lhs = parseMultiplicative();
  while (lhs && (at(Tok::Plus) || at(Tok::Minus))) {
    BinaryOp op = at(Tok::Plus) ? BinaryOp::Add : BinaryOp::Sub;
    Loc loc = tok_.loc;
    consume();
    ExprPtr rhs = parseMultiplicative();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseMultiplicative() {
  ExprPtr lhs = parseUnary();
  while (lhs) {
    BinaryOp op;
    switch (tok_.kind) {
    case Tok::Star: op = BinaryOp::Mul; break;
    case Tok::Slash: op = BinaryOp::Div; break;
    case Tok::SlashSlash: op = BinaryOp::FloorDiv; break;
    case Tok::Percent: op = BinaryOp::Mod; break;
    case Tok::At: op = BinaryOp::MatMul; break;
    default: return lhs;
    }
    Loc loc = tok_.loc;
    consume();
    ExprPtr rhs = parseUnary();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  if (!at(Tok::Minus))
    return parsePostfix();
  Loc loc = tok_.loc;
  consume();
  if (!enter(loc))
    return nullptr;
  ExprPtr operand = parseUnary();
  leave();
  if (!operand)
    return nullptr;
  return std::make_unique<UnaryExpr>(loc, UnaryOp::Neg, std::move(operand));
}

ExprPtr Parser::parsePostfix() {
  ExprPtr e = parsePrimary();
  while (e) {
    if (at(Tok::Dot)) {
      consume();
      if (!at(Tok::Ident)) {
        fail(tok_.loc, "expected 'shape', 'rank' or 'dtype' after '.', found " +
                           describe(tok_));
        return nullptr;
      }
      Loc loc = tok_.loc;
      std::string field = tok_.text;
      consume();
      e = std::make_unique<AttributeExpr>(loc, std::move(e), field);
    } else if (at(Tok::LBracket)) {
      Loc loc = tok_.loc;
      consume();
      ExprPtr index = parseExpr();
      if (!index || !expect(Tok::RBracket, "to close the index"))
        return nullptr;
      e = std::make_unique<IndexExpr>(loc, std::move(e), std::move(index));
    } else if (at(Tok::LParen)) {
      const auto *name = dyn<NameExpr>(e.get());
      if (!name) {
        fail(tok_.loc, "only a named function can be called");
        return nullptr;
      }
      Loc loc = e->loc();
      std::string callee = name->name;
      consume();
      std::vector<Arg> args;
      if (!parseArgs(args))
        return nullptr;
      e = std::make_unique<CallExpr>(loc, callee, std::move(args));
    } else {
      return e;
    }
  }
  return e;
}

bool Parser::parseArgs(std::vector<Arg> &args) {
  bool sawKeyword = false;
  while (!at(Tok::RParen)) {
    Arg arg;
    arg.loc = tok_.loc;
    if (at(Tok::Ident)) {
      // Look for `name =`: the lexer has no lookahead, so parse an expression
      // and reinterpret a bare name followed by '='.
      ExprPtr first = parseExpr();
      if (!first)
        return false;
      const auto *name = dyn<NameExpr>(first.get());
      if (name && accept(Tok::Assign)) {
        arg.name = name->name;
        arg.value = parseExpr();
        if (!arg.value)
          return false;
        for (const Arg &prev : args)
          if (prev.name == arg.name)
            return fail(arg.loc, "argument '" + arg.name + "' is given twice");
        sawKeyword = true;
      } else {
        arg.value = std::move(first);
      }
    } else {
      arg.value = parseExpr();
      if (!arg.value)
        return false;
    }
    if (arg.name.empty() && sawKeyword)
      return fail(arg.loc, "a positional argument cannot follow a keyword "
                           "argument");
    args.push_back(std::move(arg));
    if (!accept(Tok::Comma))
      break;
  }
  return expect(Tok::RParen, "to close the argument list");
}

ExprPtr Parser::parsePrimary() {
  Token t = tok_;
  switch (t.kind) {
  case Tok::Int:
    consume();
    return std::make_unique<IntExpr>(t.loc, t.intValue);
  case Tok::Float:
    consume();
    return std::make_unique<FloatExpr>(t.loc, t.floatValue, t.text);
  case Tok::String:
    consume();
    return std::make_unique<StringExpr>(t.loc, t.text);
  case Tok::KwTrue:
  case Tok::KwFalse:
    consume();
    return std::make_unique<BoolExpr>(t.loc, t.kind == Tok::KwTrue);
  case Tok::KwTraining:
    consume();
    return std::make_unique<TrainingExpr>(t.loc);
  case Tok::Ident:
    consume();
    return std::make_unique<NameExpr>(t.loc, t.text);
  case Tok::LParen: {
    consume();
    ExprPtr e = parseExpr();
    if (!e || !expect(Tok::RParen, "to close the parenthesis"))
      return nullptr;
    return e;
  }
  case Tok::LBracket: {
    consume();
    std::vector<ExprPtr> elements;
    while (!at(Tok::RBracket)) {
      ExprPtr e = parseExpr();
      if (!e)
        return nullptr;
      elements.push_back(std::move(e));
      if (!accept(Tok::Comma))
        break;
    }
    if (!expect(Tok::RBracket, "to close the list"))
      return nullptr;
    return std::make_unique<ListExpr>(t.loc, std::move(elements));
  }
  default:
    fail(t.loc, "expected an expression, found " + describe(t));
    return nullptr;
  }
}

} // namespace sinter
