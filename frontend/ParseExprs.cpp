//===- ParseExprs.cpp - Expressions ---------------------------------------===//
//
// Expressions by precedence, loosest first: `or`, `and`, `not`,
// comparisons (which do not chain), + and -, * / // % @, unary minus, then
// attributes, indexing and calls after a primary.
//
//===----------------------------------------------------------------------===//

#include "frontend/Parser.h"
#include "frontend/ParserInternal.h"

namespace sinter {
using namespace ast;

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
