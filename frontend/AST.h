//===- AST.h - The syntax tree of a Sinter source file --------------------===//
//
// A direct picture of the source: no names are resolved and nothing is
// evaluated here (that is Sema's job). Nodes use LLVM-style kinds with
// classof, so `llvm::dyn_cast`-like helpers work without RTTI.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_FRONTEND_AST_H
#define SINTER_FRONTEND_AST_H

#include "frontend/Diagnostics.h"

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace sinter::ast {

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind { Int, Float, String, Bool, Training, Name, Unary, Binary,
                    Call, Attribute, Index, List };
  Expr(Kind kind, Loc loc) : kind_(kind), loc_(loc) {}
  virtual ~Expr() = default;
  Kind kind() const { return kind_; }
  Loc loc() const { return loc_; }

private:
  Kind kind_;
  Loc loc_;
};
using ExprPtr = std::unique_ptr<Expr>;

template <typename T> const T *dyn(const Expr *e) {
  return e && T::classof(e) ? static_cast<const T *>(e) : nullptr;
}

struct IntExpr : Expr {
  IntExpr(Loc l, int64_t v) : Expr(Kind::Int, l), value(v) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Int; }
  int64_t value;
};

struct FloatExpr : Expr {
  FloatExpr(Loc l, double v, std::string s)
      : Expr(Kind::Float, l), value(v), spelling(std::move(s)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Float; }
  double value;
  std::string spelling;
};

struct StringExpr : Expr {
  StringExpr(Loc l, std::string v) : Expr(Kind::String, l), value(std::move(v)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::String; }
  std::string value;
};

struct BoolExpr : Expr {
  BoolExpr(Loc l, bool v) : Expr(Kind::Bool, l), value(v) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Bool; }
  bool value;
};

/// The `training` keyword: true in the train step, false in evaluation.
struct TrainingExpr : Expr {
  explicit TrainingExpr(Loc l) : Expr(Kind::Training, l) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Training; }
};

struct NameExpr : Expr {
  NameExpr(Loc l, std::string n) : Expr(Kind::Name, l), name(std::move(n)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Name; }
  std::string name;
};

enum class UnaryOp { Neg, Not };
enum class BinaryOp { Add, Sub, Mul, Div, FloorDiv, Mod, MatMul, Lt, Le, Gt,
                      Ge, Eq, Ne, And, Or };
const char *spelling(UnaryOp op);
const char *spelling(BinaryOp op);

struct UnaryExpr : Expr {
  UnaryExpr(Loc l, UnaryOp o, ExprPtr e)
      : Expr(Kind::Unary, l), op(o), operand(std::move(e)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Unary; }
  UnaryOp op;
  ExprPtr operand;
};

struct BinaryExpr : Expr {
  BinaryExpr(Loc l, BinaryOp o, ExprPtr a, ExprPtr b)
      : Expr(Kind::Binary, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Binary; }
  BinaryOp op;
  ExprPtr lhs, rhs;
};

/// One argument of a call: positional when `name` is empty.
struct Arg {
  Loc loc;
  std::string name;
  ExprPtr value;
};

struct CallExpr : Expr {
  CallExpr(Loc l, std::string c, std::vector<Arg> a)
      : Expr(Kind::Call, l), callee(std::move(c)), args(std::move(a)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Call; }
  std::string callee;
  std::vector<Arg> args;
};

/// `x.shape`, `x.rank`, `x.dtype`.
struct AttributeExpr : Expr {
  AttributeExpr(Loc l, ExprPtr b, std::string f)
      : Expr(Kind::Attribute, l), base(std::move(b)), field(std::move(f)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Attribute; }
  ExprPtr base;
  std::string field;
};

struct IndexExpr : Expr {
  IndexExpr(Loc l, ExprPtr b, ExprPtr i)
      : Expr(Kind::Index, l), base(std::move(b)), index(std::move(i)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::Index; }
  ExprPtr base, index;
};

struct ListExpr : Expr {
  ListExpr(Loc l, std::vector<ExprPtr> e)
      : Expr(Kind::List, l), elements(std::move(e)) {}
  static bool classof(const Expr *e) { return e->kind() == Kind::List; }
  std::vector<ExprPtr> elements;
};

/// `f32[B, 64]`: a dtype and dimension expressions.
struct TypeExpr {
  Loc loc;
  std::string dtype;
  std::vector<ExprPtr> dims;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind { Input, Param, StateUpdate, Assign, Loss, Metric, Output,
                    Repeat, If, Return };
  Stmt(Kind kind, Loc loc) : kind_(kind), loc_(loc) {}
  virtual ~Stmt() = default;
  Kind kind() const { return kind_; }
  Loc loc() const { return loc_; }

private:
  Kind kind_;
  Loc loc_;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

template <typename T> const T *dyn(const Stmt *s) {
  return s && T::classof(s) ? static_cast<const T *>(s) : nullptr;
}

struct InputStmt : Stmt {
  InputStmt(Loc l, std::string n, TypeExpr t)
      : Stmt(Kind::Input, l), name(std::move(n)), type(std::move(t)) {}
  static bool classof(const Stmt *s) { return s->kind() == Kind::Input; }
  std::string name;
  TypeExpr type;
};

/// `param` and `state` declarations.
struct ParamStmt : Stmt {
  ParamStmt(Loc l, bool st, std::string n, TypeExpr t, ExprPtr i)
      : Stmt(Kind::Param, l), isState(st), name(std::move(n)),
        type(std::move(t)), init(std::move(i)) {}
  static bool classof(const Stmt *s) { return s->kind() == Kind::Param; }
  bool isState;
  std::string name;
  TypeExpr type;
  ExprPtr init;
};

/// `NAME <- EXPR`.
struct StateUpdateStmt : Stmt {
  StateUpdateStmt(Loc l, std::string n, ExprPtr v)
      : Stmt(Kind::StateUpdate, l), name(std::move(n)), value(std::move(v)) {}
  static bool classof(const Stmt *s) { return s->kind() == Kind::StateUpdate; }
  std::string name;
  ExprPtr value;
};

/// `a = EXPR` and `a, b = EXPR`.
struct AssignStmt : Stmt {
  AssignStmt(Loc l, std::vector<std::string> t, std::vector<Loc> tl, ExprPtr v)
      : Stmt(Kind::Assign, l), targets(std::move(t)), targetLocs(std::move(tl)),
        value(std::move(v)) {}
  static bool classof(const Stmt *s) { return s->kind() == Kind::Assign; }
  std::vector<std::string> targets;
  std::vector<Loc> targetLocs;
  ExprPtr value;
};

struct LossStmt : Stmt {
  LossStmt(Loc l, ExprPtr v) : Stmt(Kind::Loss, l), value(std::move(v)) {}
  static bool classof(const Stmt *s) { return s->kind() == Kind::Loss; }
  ExprPtr value;
};

struct MetricStmt : Stmt {
  MetricStmt(Loc l, std::string n, ExprPtr v)
      : Stmt(Kind::Metric, l), name(std::move(n)), value(std::move(v)) {}
  static bool classof(const Stmt *s) { return s->kind() == Kind::Metric; }
  std::string name;
  ExprPtr value;
};

/// `output NAME = EXPR`: a tensor the eval step returns, e.g. predictions.
/// `output` is not reserved: `output = x` still binds a name.
struct OutputStmt : Stmt {
  OutputStmt(Loc l, std::string n, ExprPtr v)
      : Stmt(Kind::Output, l), name(std::move(n)), value(std::move(v)) {}
  static bool classof(const Stmt *s) { return s->kind() == Kind::Output; }
  std::string name;
  ExprPtr value;
};

struct RepeatStmt : Stmt {
  RepeatStmt(Loc l) : Stmt(Kind::Repeat, l) {}
  static bool classof(const Stmt *s) { return s->kind() == Kind::Repeat; }
  ExprPtr count;
  std::string var;      // empty without `as`
  std::string scope;    // "repeat" without `scope`
  Block body;
};

struct IfStmt : Stmt {
  IfStmt(Loc l) : Stmt(Kind::If, l) {}
  static bool classof(const Stmt *s) { return s->kind() == Kind::If; }
  ExprPtr cond;
  Block thenBody;
  Block elseBody;
};

struct ReturnStmt : Stmt {
  ReturnStmt(Loc l, std::vector<ExprPtr> v)
      : Stmt(Kind::Return, l), values(std::move(v)) {}
  static bool classof(const Stmt *s) { return s->kind() == Kind::Return; }
  std::vector<ExprPtr> values;
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

struct Import {
  Loc loc;
  std::string path;
};

struct Const {
  Loc loc;
  std::string name;
  ExprPtr value;
};

/// One parameter of a `def`. `kind` is "" for tensors, else int, float, bool
/// or string (a compile-time value).
struct DefParam {
  Loc loc;
  std::string name;
  std::string kind;
  ExprPtr defaultValue;
};

struct Def {
  Loc loc;
  std::string name;
  std::vector<DefParam> params;
  Block body;
};

struct Model {
  Loc loc;
  std::string name;
  Block body;
};

/// One parsed source file.
struct File {
  uint32_t id = 0;
  std::vector<Import> imports;
  std::vector<Const> consts;
  std::vector<std::unique_ptr<Def>> defs;
  std::vector<std::unique_ptr<Model>> models;
};

/// Prints the tree with locations, for `sinterc --emit=ast`.
void dump(const File &file, const SourceManager &sources, std::ostream &os);

} // namespace sinter::ast

#endif // SINTER_FRONTEND_AST_H
