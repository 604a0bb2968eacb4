//===- ParseStmts.cpp - Statements ----------------------------------------===//
//
// Each statement of a model or def, from its first token: inputs, params and
// states, the loss, metrics and outputs, `return`, bindings and state
// updates, `repeat` and `if`.
//
//===----------------------------------------------------------------------===//

#include "frontend/Parser.h"
#include "frontend/ParserInternal.h"

namespace sinter {
using namespace ast;

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

} // namespace sinter
