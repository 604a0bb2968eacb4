//===- SemaExprs.cpp - Expressions ----------------------------------------===//
//
// Names, operators, attributes and indexing: compile-time values are
// computed here, tensor operations become nodes of the graph.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include <cctype>
#include <cmath>
#include <limits>

namespace sinter {
using namespace ast;

Value Elaborator::eval(const Expr &expr) {
  if (!step(expr.loc()))
    return Value::error();
  switch (expr.kind()) {
  case Expr::Kind::Int:
    return Value::integer(static_cast<const IntExpr &>(expr).value);
  case Expr::Kind::Float:
    return Value::floating(static_cast<const FloatExpr &>(expr).value);
  case Expr::Kind::String:
    return Value::string(static_cast<const StringExpr &>(expr).value);
  case Expr::Kind::Bool:
    return Value::boolean(static_cast<const BoolExpr &>(expr).value);
  case Expr::Kind::Training:
    return Value::boolean(graph_.training);
  case Expr::Kind::Name:
    return evalName(static_cast<const NameExpr &>(expr));
  case Expr::Kind::Unary:
    return evalUnary(static_cast<const UnaryExpr &>(expr));
  case Expr::Kind::Binary:
    return evalBinary(static_cast<const BinaryExpr &>(expr));
  case Expr::Kind::Call:
    return evalCall(static_cast<const CallExpr &>(expr));
  case Expr::Kind::Attribute:
    return evalAttribute(static_cast<const AttributeExpr &>(expr));
  case Expr::Kind::Index:
    return evalIndex(static_cast<const IndexExpr &>(expr));
  case Expr::Kind::List: {
    std::vector<Value> items;
    for (const ExprPtr &e : static_cast<const ListExpr &>(expr).elements) {
      Value v = eval(*e);
      if (v.isError())
        return v;
      items.push_back(std::move(v));
    }
    return Value::makeList(std::move(items));
  }
  }
  return fail(expr.loc(), "unsupported expression");
}

std::vector<std::string> Elaborator::visibleNames() const {
  std::vector<std::string> names;
  if (!frames_.empty())
    for (const auto &v : frames_.back().vars)
      names.push_back(v.first);
  for (const auto &c : consts_)
    names.push_back(c.first);
  for (const auto &d : defs_)
    names.push_back(d.first);
  for (const auto &b : builtinTable())
    names.push_back(b.first);
  return names;
}

Value Elaborator::evalName(const NameExpr &expr) {
  const std::string &name = expr.name;
  if (!frames_.empty()) {
    auto &vars = frames_.back().vars;
    if (auto it = vars.find(name); it != vars.end())
      return it->second;
  }
  if (consts_.count(name))
    return constValue(name, expr.loc());
  if (auto it = overrides_.find(name); it != overrides_.end())
    return it->second;
  if (name == "none")
    return Value::none();
  if (std::optional<shape::DType> t = shape::parseDType(name))
    return Value::type(*t);
  // Initialisers without arguments may be written bare: `= zeros`.
  if (name == "zeros" || name == "ones")
    return Value::initializer(name, {});
  if (std::isupper(static_cast<unsigned char>(name[0])))
    return Value::size(shape::Dim::symbol(name));
  std::string hint = closestMatch(name, visibleNames());
  if (defs_.count(name) || builtinTable().count(name))
    return fail(expr.loc(), "'" + name + "' is a function; call it with "
                            "arguments");
  return fail(expr.loc(), "unknown name '" + name + "'" +
                              (hint.empty() ? "" : "; did you mean '" + hint +
                                                       "'?"));
}

Value Elaborator::evalUnary(const UnaryExpr &expr) {
  Value v = eval(*expr.operand);
  if (v.isError())
    return v;
  if (expr.op == UnaryOp::Not) {
    if (v.kind == Value::Kind::Bool)
      return Value::boolean(!v.b);
    return fail(expr.loc(), "'not' needs a compile-time bool, not " +
                                v.describe());
  }
  if (v.kind == Value::Kind::Float)
    return Value::floating(-v.f);
  if (v.kind == Value::Kind::Int) {
    std::optional<shape::Dim> d = v.dim.mul(shape::Dim::known(-1));
    if (!d)
      return fail(expr.loc(), "integer overflow");
    return Value::size(*d);
  }
  if (v.isTensor()) {
    const TensorType &t = typeOf(v);
    if (t.dtype == shape::DType::Bool)
      return fail(expr.loc(), "cannot negate a bool tensor");
    return emit1("neg", expr.loc(), {v}, {}, t);
  }
  return fail(expr.loc(), "cannot negate " + v.describe());
}

static const char *comparePredicate(BinaryOp op) {
  switch (op) {
  case BinaryOp::Lt: return "lt";
  case BinaryOp::Le: return "le";
  case BinaryOp::Gt: return "gt";
  case BinaryOp::Ge: return "ge";
  case BinaryOp::Eq: return "eq";
  case BinaryOp::Ne: return "ne";
  default: return nullptr;
  }
}

Value Elaborator::evalBinary(const BinaryExpr &expr) {
  if (expr.op == BinaryOp::And || expr.op == BinaryOp::Or) {
    Value a = eval(*expr.lhs);
    if (a.isError())
      return a;
    if (a.kind != Value::Kind::Bool)
      return fail(expr.lhs->loc(), std::string("'") + spelling(expr.op) +
                                       "' needs compile-time bools, not " +
                                       a.describe());
    if ((expr.op == BinaryOp::Or) == a.b)
      return a; // Short-circuit, as in Python.
    Value b = eval(*expr.rhs);
    if (b.isError())
      return b;
    if (b.kind != Value::Kind::Bool)
      return fail(expr.rhs->loc(), std::string("'") + spelling(expr.op) +
                                       "' needs compile-time bools, not " +
                                       b.describe());
    return b;
  }
  Value a = eval(*expr.lhs);
  if (a.isError())
    return a;
  Value b = eval(*expr.rhs);
  if (b.isError())
    return b;
  if (!a.isTensor() && !b.isTensor())
    return evalCompileTime(expr, a, b);

  Loc loc = expr.loc();
  switch (expr.op) {
  case BinaryOp::Add: return binary("add", loc, a, b);
  case BinaryOp::Sub: return binary("sub", loc, a, b);
  case BinaryOp::Mul: return binary("mul", loc, a, b);
  case BinaryOp::Div: return binary("div", loc, a, b);
  case BinaryOp::MatMul: {
    if (!a.isTensor() || !b.isTensor())
      return fail(loc, "'@' needs two tensors");
    const TensorType &x = typeOf(a), &y = typeOf(b);
    if (x.dtype != y.dtype || !shape::isFloat(x.dtype))
      return fail(loc, "'@' needs two floating-point tensors of one dtype, "
                       "got " + x.str() + " and " + y.str());
    shape::Result r = shape::matmul(x.shape, y.shape);
    if (!r.ok())
      return fail(loc, r.error);
    return emit1("matmul", loc, {a, b}, {}, {x.dtype, r.shape});
  }
  case BinaryOp::FloorDiv:
  case BinaryOp::Mod:
    return fail(loc, std::string("'") + spelling(expr.op) +
                         "' is for compile-time integers, not tensors");
  default:
    break;
  }
  const char *pred = comparePredicate(expr.op);
  Value cmp = binary("compare", loc, a, b);
  if (cmp.isError())
    return cmp;
  // `binary` typed the result like its operands; a comparison gives bools.
  graph_.values[cmp.tensor].dtype = shape::DType::Bool;
  graph_.nodes.back().attrs.push_back({"predicate", std::string(pred)});
  return cmp;
}

static double floorMod(double a, double b) {
  double r = std::fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

Value Elaborator::evalCompileTime(const BinaryExpr &expr, const Value &a,
                                  const Value &b) {
  using K = Value::Kind;
  Loc loc = expr.loc();
  BinaryOp op = expr.op;
  const char *pred = comparePredicate(op);

  // Sizes (known or symbolic integers).
  if (a.kind == K::Int && b.kind == K::Int) {
    const shape::Dim &x = a.dim, &y = b.dim;
    if (x.isKnown() && y.isKnown()) {
      int64_t p = x.value(), q = y.value(), r = 0;
      switch (op) {
      case BinaryOp::Add:
        if (__builtin_add_overflow(p, q, &r))
          return fail(loc, "integer overflow");
        return Value::integer(r);
      case BinaryOp::Sub:
        if (__builtin_sub_overflow(p, q, &r))
          return fail(loc, "integer overflow");
        return Value::integer(r);
      case BinaryOp::Mul:
        if (__builtin_mul_overflow(p, q, &r))
          return fail(loc, "integer overflow");
        return Value::integer(r);
      case BinaryOp::Div:
        if (q == 0)
          return fail(loc, "division by zero");
        return Value::floating(double(p) / double(q));
      case BinaryOp::FloorDiv:
      case BinaryOp::Mod: {
        if (q == 0)
          return fail(loc, "division by zero");
        if (p == std::numeric_limits<int64_t>::min() && q == -1)
          return fail(loc, "integer overflow");
        int64_t d = p / q, m = p % q;
        if (m != 0 && ((m < 0) != (q < 0))) {
          --d;
          m += q;
        }
        return Value::integer(op == BinaryOp::FloorDiv ? d : m);
      }
      case BinaryOp::Lt: return Value::boolean(p < q);
      case BinaryOp::Le: return Value::boolean(p <= q);
      case BinaryOp::Gt: return Value::boolean(p > q);
      case BinaryOp::Ge: return Value::boolean(p >= q);
      case BinaryOp::Eq: return Value::boolean(p == q);
      case BinaryOp::Ne: return Value::boolean(p != q);
      default: break;
      }
      return fail(loc, std::string("'") + spelling(op) +
                           "' is not defined on integers");
    }
    std::optional<shape::Dim> r;
    std::string why = "; bind the symbols with -D";
    switch (op) {
    case BinaryOp::Add: r = x.add(y); break;
    case BinaryOp::Sub:
      if (auto ny = y.mul(shape::Dim::known(-1)))
        r = x.add(*ny);
      break;
    case BinaryOp::Mul: r = x.mul(y); break;
    case BinaryOp::FloorDiv: r = x.divExact(y); break;
    case BinaryOp::Eq:
    case BinaryOp::Ne:
      if (x == y)
        return Value::boolean(op == BinaryOp::Eq);
      if (x.coefficient() == 0 || y.coefficient() == 0)
        return Value::boolean(op == BinaryOp::Ne);
      break;
    default: break;
    }
    if (r)
      return Value::size(*r);
    return fail(loc, "cannot compute " + x.str() + " " + spelling(op) + " " +
                         y.str() + " at compile time" + why);
  }

  // Numbers.
  if (a.isNumber() && b.isNumber()) {
    double p = a.number(), q = b.number();
    switch (op) {
    case BinaryOp::Add: return Value::floating(p + q);
    case BinaryOp::Sub: return Value::floating(p - q);
    case BinaryOp::Mul: return Value::floating(p * q);
    case BinaryOp::Div:
      if (q == 0)
        return fail(loc, "division by zero");
      return Value::floating(p / q);
    case BinaryOp::FloorDiv:
    case BinaryOp::Mod:
      if (q == 0)
        return fail(loc, "division by zero");
      return Value::floating(op == BinaryOp::Mod ? floorMod(p, q)
                                                 : std::floor(p / q));
    case BinaryOp::Lt: return Value::boolean(p < q);
    case BinaryOp::Le: return Value::boolean(p <= q);
    case BinaryOp::Gt: return Value::boolean(p > q);
    case BinaryOp::Ge: return Value::boolean(p >= q);
    case BinaryOp::Eq: return Value::boolean(p == q);
    case BinaryOp::Ne: return Value::boolean(p != q);
    default:
      return fail(loc, std::string("'") + spelling(op) +
                           "' is not defined on numbers");
    }
  }

  // Strings, bools, dtypes, lists.
  if (a.kind == b.kind && (op == BinaryOp::Eq || op == BinaryOp::Ne)) {
    bool eq;
    switch (a.kind) {
    case K::String: eq = a.s == b.s; break;
    case K::Bool: eq = a.b == b.b; break;
    case K::DType: eq = a.dtype == b.dtype; break;
    case K::None: eq = true; break;
    default:
      return fail(loc, "cannot compare " + a.describe() + " with " +
                           b.describe());
    }
    return Value::boolean(op == BinaryOp::Eq ? eq : !eq);
  }
  if (op == BinaryOp::Add && a.kind == K::String && b.kind == K::String)
    return Value::string(a.s + b.s);
  if (op == BinaryOp::Add && a.kind == K::List && b.kind == K::List) {
    std::vector<Value> items = a.list;
    items.insert(items.end(), b.list.begin(), b.list.end());
    return Value::makeList(std::move(items));
  }
  if (pred && (a.kind == K::None || b.kind == K::None))
    return Value::boolean((op == BinaryOp::Ne));
  return fail(loc, std::string("'") + spelling(op) + "' cannot combine " +
                       a.describe() + " and " + b.describe());
}

Value Elaborator::evalAttribute(const AttributeExpr &expr) {
  Value base = eval(*expr.base);
  if (base.isError())
    return base;
  if (!base.isTensor())
    return fail(expr.loc(), "'." + expr.field + "' needs a tensor, not " +
                                base.describe());
  const TensorType &t = typeOf(base);
  if (expr.field == "shape") {
    std::vector<Value> dims;
    for (const shape::Dim &d : t.shape)
      dims.push_back(Value::size(d));
    return Value::makeList(std::move(dims));
  }
  if (expr.field == "rank")
    return Value::integer(t.shape.size());
  if (expr.field == "dtype")
    return Value::type(t.dtype);
  std::string hint = closestMatch(expr.field, {"shape", "rank", "dtype"});
  return fail(expr.loc(), "a tensor has no '" + expr.field + "'" +
                              (hint.empty() ? "; use shape, rank or dtype"
                                            : "; did you mean '" + hint + "'?"));
}

Value Elaborator::evalIndex(const IndexExpr &expr) {
  Value base = eval(*expr.base);
  if (base.isError())
    return base;
  Value index = eval(*expr.index);
  if (index.isError())
    return index;
  if (base.isTensor())
    return fail(expr.loc(), "tensors cannot be indexed; use slice(x, axis, "
                            "start, end)");
  if (base.kind != Value::Kind::List)
    return fail(expr.loc(), "cannot index " + base.describe());
  std::optional<int64_t> i = intArg(index, expr.index->loc(), "the index");
  if (!i)
    return Value::error();
  std::optional<int64_t> k = shape::normalizeAxis(*i, base.list.size());
  if (!k)
    return fail(expr.index->loc(), "index " + std::to_string(*i) +
                                       " is out of range for a list of " +
                                       std::to_string(base.list.size()));
  return base.list[*k];
}

} // namespace sinter
