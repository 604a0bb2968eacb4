//===- Math.cpp - Elementwise math and reductions -------------------------===//
//
// Applied to compile-time numbers, the math functions are evaluated at
// compile time; on tensors each emits one graph node.
//
//===----------------------------------------------------------------------===//

#include "frontend/builtins/Support.h"

#include <cmath>

namespace sinter::builtins {
namespace {

using Fold = double (*)(double);

double sigmoidOf(double x) { return 1 / (1 + std::exp(-x)); }
double reluOf(double x) { return x > 0 ? x : 0; }
double siluOf(double x) { return x * sigmoidOf(x); }
double rsqrtOf(double x) { return 1 / std::sqrt(x); }
double geluOf(double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }
double absOf(double x) { return std::fabs(x); }
double expOf(double x) { return std::exp(x); }
double logOf(double x) { return std::log(x); }
double sqrtOf(double x) { return std::sqrt(x); }
double tanhOf(double x) { return std::tanh(x); }

Builtin unary(const char *op, Fold fold, bool allowInt) {
  return {{{"x", std::nullopt}},
          [op, fold, allowInt](E &e, const CallExpr &c, BuiltinArgs &a) {
            if (a[0].isNumber())
              return F(fold(a[0].number()));
            Value x = allowInt ? tensorIn(e, a[0], c.loc(), "x")
                               : floatTensor(e, a[0], c.loc(), "x");
            if (x.isError())
              return x;
            if (e.typeOf(x).dtype == DType::Bool)
              return e.fail(c.loc(), std::string(op) + " of a bool tensor");
            return e.emit1(op, c.loc(), {x}, {}, e.typeOf(x));
          }};
}

Builtin binaryFn(const char *op, double (*fold)(double, double)) {
  return {{{"a", std::nullopt}, {"b", std::nullopt}},
          [op, fold](E &e, const CallExpr &c, BuiltinArgs &a) {
            bool ints = a[0].isKnownInt() && a[1].isKnownInt();
            if (ints && std::string(op) != "pow")
              return I(fold(a[0].number(), a[1].number()));
            if (a[0].isNumber() && a[1].isNumber())
              return F(fold(a[0].number(), a[1].number()));
            Value r = e.binary(op, c.loc(), a[0], a[1]);
            if (!r.isError() && !shape::isFloat(e.typeOf(r).dtype) &&
                std::string(op) == "pow")
              return e.fail(c.loc(), "pow needs floating-point tensors");
            return r;
          }};
}

Builtin reduction(const char *op, bool needsFloat) {
  return {{{"x", std::nullopt}, {"axis", None()}, {"keepdim", B(false)}},
          [op, needsFloat](E &e, const CallExpr &c, BuiltinArgs &a) {
            Value x = needsFloat ? floatTensor(e, a[0], c.loc(), "x")
                                 : tensorIn(e, a[0], c.loc(), "x");
            if (x.isError())
              return x;
            std::vector<int64_t> axes;
            if (a[1].kind != Value::Kind::None) {
              std::optional<std::vector<int64_t>> list =
                  e.intListArg(a[1], c.loc(), "axis");
              if (!list)
                return Value::error();
              axes = *list;
              if (axes.empty())
                return e.fail(c.loc(), "axis=[] reduces nothing; omit axis to "
                                       "reduce every axis");
            }
            std::optional<bool> keep = e.boolArg(a[2], c.loc(), "keepdim");
            if (!keep)
              return Value::error();
            const TensorType &t = e.typeOf(x);
            shape::Result r = shape::reduce(t.shape, axes, *keep);
            if (!r.ok())
              return e.fail(c.loc(), r.error);
            for (int64_t &ax : axes)
              ax = *shape::normalizeAxis(ax, t.shape.size());
            return e.emit1(op, c.loc(), {x},
                           {{"axes", axes}, {"keepdim", *keep}},
                           {t.dtype, r.shape});
          }};
}

Builtin softmaxLike(const char *op) {
  return {{{"x", std::nullopt}, {"axis", I(-1)}},
          [op](E &e, const CallExpr &c, BuiltinArgs &a) {
            Value x = floatTensor(e, a[0], c.loc(), "x");
            if (x.isError())
              return x;
            std::optional<int64_t> axis = e.intArg(a[1], c.loc(), "axis");
            if (!axis)
              return Value::error();
            const TensorType &t = e.typeOf(x);
            std::optional<int64_t> ax = shape::normalizeAxis(*axis, t.shape.size());
            if (!ax)
              return e.fail(c.loc(), "axis " + std::to_string(*axis) +
                                         " is out of range for " + t.str());
            return e.emit1(op, c.loc(), {x}, {{"axis", *ax}}, t);
          }};
}

} // namespace

void addMath(Table &t) {
  // Elementwise math.
  t["exp"] = unary("exp", expOf, false);
  t["log"] = unary("log", logOf, false);
  t["sqrt"] = unary("sqrt", sqrtOf, false);
  t["rsqrt"] = unary("rsqrt", rsqrtOf, false);
  t["tanh"] = unary("tanh", tanhOf, false);
  t["sigmoid"] = unary("sigmoid", sigmoidOf, false);
  t["silu"] = unary("silu", siluOf, false);
  t["abs"] = unary("abs", absOf, true);
  t["relu"] = unary("relu", reluOf, true);
  t["pow"] = binaryFn("pow", [](double a, double b) { return std::pow(a, b); });
  t["maximum"] = binaryFn("maximum", [](double a, double b) { return a > b ? a : b; });
  t["minimum"] = binaryFn("minimum", [](double a, double b) { return a < b ? a : b; });

  t["gelu"] = {{{"x", std::nullopt}, {"approximate", S("none")}},
               [](E &e, const CallExpr &c, BuiltinArgs &a) {
                 std::optional<std::string> ap =
                     e.stringArg(a[1], c.loc(), "approximate");
                 if (!ap)
                   return Value::error();
                 if (*ap != "none" && *ap != "tanh")
                   return e.fail(c.loc(), "approximate must be \"none\" or "
                                          "\"tanh\", not \"" + *ap + "\"");
                 if (a[0].isNumber() && *ap == "none")
                   return F(geluOf(a[0].number()));
                 Value x = floatTensor(e, a[0], c.loc(), "x");
                 if (x.isError())
                   return x;
                 return e.emit1("gelu", c.loc(), {x}, {{"approximate", *ap}},
                                e.typeOf(x));
               }};

  t["where"] = {{{"condition", std::nullopt}, {"a", std::nullopt},
                 {"b", std::nullopt}},
                [](E &e, const CallExpr &c, BuiltinArgs &a) {
                  Value cond = tensorIn(e, a[0], c.loc(), "the condition");
                  if (cond.isError())
                    return cond;
                  if (e.typeOf(cond).dtype != DType::Bool)
                    return e.fail(c.loc(), "the condition of where must be a "
                                           "bool tensor, not " +
                                               e.typeOf(cond).str());
                  std::optional<DType> like;
                  if (a[1].isTensor())
                    like = e.typeOf(a[1]).dtype;
                  else if (a[2].isTensor())
                    like = e.typeOf(a[2]).dtype;
                  Value x = e.toTensor(a[1], c.loc(), "a", like);
                  if (x.isError())
                    return x;
                  Value y = e.toTensor(a[2], c.loc(), "b", like);
                  if (y.isError())
                    return y;
                  const TensorType &xt = e.typeOf(x), &yt = e.typeOf(y);
                  if (xt.dtype != yt.dtype)
                    return e.fail(c.loc(), "where: " + xt.str() + " and " +
                                               yt.str() + " differ in dtype");
                  shape::Result r = shape::broadcast(xt.shape, yt.shape);
                  if (r.ok())
                    r = shape::broadcast(e.typeOf(cond).shape, r.shape);
                  if (!r.ok())
                    return e.fail(c.loc(), "where: " + r.error);
                  return e.emit1("where", c.loc(), {cond, x, y}, {},
                                 {xt.dtype, r.shape});
                }};

  t["cast"] = {{{"x", std::nullopt}, {"dtype", std::nullopt}},
               [](E &e, const CallExpr &c, BuiltinArgs &a) {
                 std::optional<DType> to;
                 if (a[1].kind == Value::Kind::DType)
                   to = a[1].dtype;
                 else if (a[1].kind == Value::Kind::String)
                   to = shape::parseDType(a[1].s);
                 if (!to)
                   return e.fail(c.loc(), "cast needs a dtype such as f32, not " +
                                              a[1].describe());
                 Value x = e.toTensor(a[0], c.loc(), "x", *to);
                 if (x.isError() || e.typeOf(x).dtype == *to)
                   return x;
                 Value r = e.emit1("cast", c.loc(), {x}, {},
                                   {*to, e.typeOf(x).shape});
                 if (auto bound = e.valueBound(x); bound && !r.isError())
                   e.setValueBound(r, *bound);
                 return r;
               }};

  // Reductions.
  t["sum"] = reduction("reduce_sum", false);
  t["mean"] = reduction("reduce_mean", true);
  t["max"] = reduction("reduce_max", false);
  t["min"] = reduction("reduce_min", false);
  t["softmax"] = softmaxLike("softmax");
  t["log_softmax"] = softmaxLike("log_softmax");

  // error("message"): stops compilation with the message at the call site,
  // for libraries that check their arguments.
  t["error"] = {{{"message", std::nullopt}},
                [](E &e, const CallExpr &c, BuiltinArgs &a) {
                  std::optional<std::string> m =
                      e.stringArg(a[0], c.loc(), "the message");
                  if (!m)
                    return Value::error();
                  return e.fail(c.loc(), *m);
                }};
}

} // namespace sinter::builtins
