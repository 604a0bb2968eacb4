//===- Builtins.cpp - Operations, losses and initialisers of Sinter -------===//
//
// LANGUAGE.md sections 6 and 7. Each builtin checks its arguments, asks the
// shared shape rules for the result, and emits one graph node. Applied to
// compile-time numbers, the math functions are evaluated at compile time.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

#include <cmath>

namespace sinter {
using namespace ast;
using shape::DType;
using E = Elaborator;
using Attrs = std::vector<std::pair<std::string, AttrValue>>;

namespace {

Value I(int64_t v) { return Value::integer(v); }
Value F(double v) { return Value::floating(v); }
Value B(bool v) { return Value::boolean(v); }
Value S(const char *v) { return Value::string(v); }
Value None() { return Value::none(); }

/// The tensor argument `v`, or poison after reporting.
Value tensorIn(E &e, const Value &v, Loc loc, const char *what) {
  if (!e.tensorArg(v, loc, what))
    return Value::error();
  return v;
}

Value floatTensor(E &e, const Value &v, Loc loc, const char *what) {
  Value t = tensorIn(e, v, loc, what);
  if (t.isError())
    return t;
  if (!shape::isFloat(e.typeOf(t).dtype))
    return e.fail(loc, std::string(what) + " must be a floating-point tensor, "
                                           "not " + e.typeOf(t).str());
  return t;
}

Value intTensor(E &e, const Value &v, Loc loc, const char *what) {
  Value t = tensorIn(e, v, loc, what);
  if (t.isError())
    return t;
  if (!shape::isInteger(e.typeOf(t).dtype))
    return e.fail(loc, std::string(what) + " must be an integer tensor (i32 or "
                                           "i64), not " + e.typeOf(t).str());
  return t;
}

/// `k` or `[kh, kw]`.
bool pairArg(E &e, const Value &v, Loc loc, const char *what, int64_t out[2]) {
  std::optional<std::vector<int64_t>> list = e.intListArg(v, loc, what);
  if (!list)
    return false;
  if (list->size() == 1) {
    out[0] = out[1] = (*list)[0];
    return true;
  }
  if (list->size() == 2) {
    out[0] = (*list)[0];
    out[1] = (*list)[1];
    return true;
  }
  e.fail(loc, std::string(what) + " must be an integer or a pair");
  return false;
}

//===--- Elementwise --------------------------------------------------===//

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

//===--- Reductions ---------------------------------------------------===//

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

//===--- Batch statistics ---------------------------------------------===//

/// The input and normalized axes of batch_norm_stats / batch_norm_count,
/// with the reduced shape.
struct StatsArgs {
  Value x;
  std::vector<int64_t> axes;
  shape::Shape reduced;
};

std::optional<StatsArgs> statsArgs(E &e, const CallExpr &c, BuiltinArgs &a,
                                   const char *name) {
  Value x = floatTensor(e, a[0], c.loc(), "the input");
  if (x.isError())
    return std::nullopt;
  std::optional<std::vector<int64_t>> axes = e.intListArg(a[1], c.loc(), "axes");
  if (!axes)
    return std::nullopt;
  if (axes->empty()) {
    e.fail(c.loc(), std::string(name) + " needs at least one axis");
    return std::nullopt;
  }
  const TensorType &xt = e.typeOf(x);
  shape::Result r = shape::reduce(xt.shape, *axes, false);
  if (!r.ok()) {
    e.fail(c.loc(), r.error);
    return std::nullopt;
  }
  for (int64_t &ax : *axes)
    ax = *shape::normalizeAxis(ax, xt.shape.size());
  return StatsArgs{x, *axes, r.shape};
}

//===--- Losses -------------------------------------------------------===//

/// `reduction=`, or PyTorch's legacy `size_average=`/`reduce=` pair.
std::optional<std::string> reductionOf(E &e, const CallExpr &c,
                                       const Value &reduction,
                                       const Value &sizeAverage,
                                       const Value &reduce) {
  std::optional<std::string> r = e.stringArg(reduction, c.loc(), "reduction");
  if (!r)
    return std::nullopt;
  if (*r != "mean" && *r != "sum" && *r != "none") {
    e.fail(c.loc(), "reduction must be \"mean\", \"sum\" or \"none\", not \"" +
                        *r + "\"");
    return std::nullopt;
  }
  bool legacy = sizeAverage.kind != Value::Kind::None ||
                reduce.kind != Value::Kind::None;
  if (!legacy)
    return r;
  bool sa = true, rd = true;
  if (sizeAverage.kind != Value::Kind::None) {
    std::optional<bool> v = e.boolArg(sizeAverage, c.loc(), "size_average");
    if (!v)
      return std::nullopt;
    sa = *v;
  }
  if (reduce.kind != Value::Kind::None) {
    std::optional<bool> v = e.boolArg(reduce, c.loc(), "reduce");
    if (!v)
      return std::nullopt;
    rd = *v;
  }
  std::string mapped = !rd ? "none" : (sa ? "mean" : "sum");
  e.warn(c.loc(), "size_average and reduce are deprecated; use reduction=\"" +
                      mapped + "\"");
  return mapped;
}

Builtin classLoss(const char *op, bool hasSmoothing) {
  std::vector<BuiltinParam> params = {{"input", std::nullopt},
                                      {"target", std::nullopt},
                                      {"reduction", S("mean")},
                                      {"ignore_index", None()},
                                      {"size_average", None()},
                                      {"reduce", None()}};
  if (hasSmoothing)
    params.push_back({"label_smoothing", F(0)});
  return {params, [op, hasSmoothing](E &e, const CallExpr &c, BuiltinArgs &a) {
            Value logits = floatTensor(e, a[0], c.loc(), "the logits");
            if (logits.isError())
              return logits;
            Value target = intTensor(e, a[1], c.loc(), "the target");
            if (target.isError())
              return target;
            std::optional<std::string> red = reductionOf(e, c, a[2], a[4], a[5]);
            if (!red)
              return Value::error();
            const TensorType &lt = e.typeOf(logits);
            shape::Result r =
                shape::classTargets(lt.shape, e.typeOf(target).shape);
            if (!r.ok())
              return e.fail(c.loc(), r.error);
            Attrs attrs = {{"reduction", *red}};
            if (a[3].kind != Value::Kind::None) {
              std::optional<int64_t> ig = e.intArg(a[3], c.loc(), "ignore_index");
              if (!ig)
                return Value::error();
              attrs.push_back({"ignore_index", *ig});
            }
            if (hasSmoothing) {
              std::optional<double> ls =
                  e.numberArg(a[6], c.loc(), "label_smoothing");
              if (!ls)
                return Value::error();
              if (*ls < 0 || *ls >= 1)
                return e.fail(c.loc(), "label_smoothing must be in [0, 1)");
              attrs.push_back({"label_smoothing", *ls});
            }
            shape::Shape out = *red == "none" ? r.shape : shape::Shape{};
            return e.emit1(op, c.loc(), {logits, target}, std::move(attrs),
                           {lt.dtype, out});
          }};
}

Builtin pairLoss(const char *op) {
  return {{{"input", std::nullopt},
           {"target", std::nullopt},
           {"reduction", S("mean")},
           {"size_average", None()},
           {"reduce", None()}},
          [op](E &e, const CallExpr &c, BuiltinArgs &a) {
            Value x = floatTensor(e, a[0], c.loc(), "the input");
            if (x.isError())
              return x;
            Value t = e.toTensor(a[1], c.loc(), "the target", e.typeOf(x).dtype);
            if (t.isError())
              return t;
            const TensorType &xt = e.typeOf(x), &tt = e.typeOf(t);
            if (xt.dtype != tt.dtype)
              return e.fail(c.loc(), "input " + xt.str() + " and target " +
                                         tt.str() + " have different dtypes");
            shape::Result r = shape::sameShape(xt.shape, tt.shape);
            if (!r.ok())
              return e.fail(c.loc(), r.error);
            std::optional<std::string> red = reductionOf(e, c, a[2], a[3], a[4]);
            if (!red)
              return Value::error();
            shape::Shape out = *red == "none" ? r.shape : shape::Shape{};
            return e.emit1(op, c.loc(), {x, t}, {{"reduction", *red}},
                           {xt.dtype, out});
          }};
}

//===--- Initialisers -------------------------------------------------===//

Builtin initializer(const char *name, std::vector<BuiltinParam> params) {
  return {params, [name, params](E &e, const CallExpr &c, BuiltinArgs &a) {
            std::vector<double> args;
            for (size_t i = 0; i < a.size(); ++i) {
              std::optional<double> v = e.numberArg(a[i], c.loc(), params[i].name);
              if (!v)
                return Value::error();
              if (!std::isfinite(*v))
                return e.fail(c.loc(), std::string(params[i].name) +
                                           " must be finite");
              args.push_back(*v);
            }
            std::string n = name;
            if ((n == "normal" || n == "trunc_normal") && args[1] <= 0)
              return e.fail(c.loc(), "the standard deviation must be positive");
            if (n == "uniform" && args[0] >= args[1])
              return e.fail(c.loc(), "uniform(lo, hi) needs lo < hi");
            if (n == "trunc_normal" && args[2] >= args[3])
              return e.fail(c.loc(), "trunc_normal(mean, std, a, b) needs a < b");
            if ((n.rfind("kaiming", 0) == 0 || n == "xavier_uniform") &&
                (args[0] <= 0 || (n == "xavier_uniform" && args[1] <= 0)))
              return e.fail(c.loc(), "fan sizes must be positive");
            return Value::initializer(name, std::move(args));
          }};
}

std::map<std::string, Builtin> makeTable() {
  std::map<std::string, Builtin> t;

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

  // Shape operations.
  t["reshape"] = {{{"x", std::nullopt}, {"shape", std::nullopt}},
                  [](E &e, const CallExpr &c, BuiltinArgs &a) {
                    Value x = tensorIn(e, a[0], c.loc(), "x");
                    if (x.isError())
                      return x;
                    std::optional<shape::Shape> target =
                        e.shapeArg(a[1], c.loc(), "the shape");
                    if (!target)
                      return Value::error();
                    const TensorType &t = e.typeOf(x);
                    shape::Result r = shape::reshape(t.shape, *target);
                    if (!r.ok())
                      return e.fail(c.loc(), r.error);
                    Value out = e.emit1("reshape", c.loc(), {x}, {},
                                        {t.dtype, r.shape});
                    if (auto bound = e.valueBound(x); bound && !out.isError())
                      e.setValueBound(out, *bound);
                    return out;
                  }};

  t["transpose"] = {{{"x", std::nullopt}, {"perm", None()}},
                    [](E &e, const CallExpr &c, BuiltinArgs &a) {
                      Value x = tensorIn(e, a[0], c.loc(), "x");
                      if (x.isError())
                        return x;
                      const TensorType &t = e.typeOf(x);
                      std::vector<int64_t> perm;
                      if (a[1].kind == Value::Kind::None) {
                        if (t.shape.size() < 2)
                          return e.fail(c.loc(), "transpose(x) swaps the last "
                                                 "two axes; " + t.str() +
                                                     " has fewer than two");
                        for (size_t i = 0; i < t.shape.size(); ++i)
                          perm.push_back(i);
                        std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
                      } else {
                        std::optional<std::vector<int64_t>> p =
                            e.intListArg(a[1], c.loc(), "the permutation");
                        if (!p)
                          return Value::error();
                        perm = *p;
                      }
                      shape::Result r = shape::transpose(t.shape, perm);
                      if (!r.ok())
                        return e.fail(c.loc(), r.error);
                      for (int64_t &p : perm)
                        p = *shape::normalizeAxis(p, t.shape.size());
                      Value out = e.emit1("transpose", c.loc(), {x},
                                          {{"permutation", perm}},
                                          {t.dtype, r.shape});
                      if (auto bound = e.valueBound(x); bound && !out.isError())
                        e.setValueBound(out, *bound);
                      return out;
                    }};

  t["concat"] = {{{"tensors", std::nullopt}, {"axis", I(0)}},
                 [](E &e, const CallExpr &c, BuiltinArgs &a) {
                   if (a[0].kind != Value::Kind::List || a[0].list.empty())
                     return e.fail(c.loc(), "concat needs a non-empty list of "
                                            "tensors, e.g. concat([a, b], 1)");
                   std::vector<Value> inputs;
                   std::vector<shape::Shape> shapes;
                   for (const Value &v : a[0].list) {
                     Value x = tensorIn(e, v, c.loc(), "each element");
                     if (x.isError())
                       return x;
                     if (e.typeOf(x).dtype != e.typeOf(a[0].list[0]).dtype)
                       return e.fail(c.loc(), "concat of tensors of different "
                                              "dtypes");
                     inputs.push_back(x);
                     shapes.push_back(e.typeOf(x).shape);
                   }
                   std::optional<int64_t> axis = e.intArg(a[1], c.loc(), "axis");
                   if (!axis)
                     return Value::error();
                   shape::Result r = shape::concat(shapes, *axis);
                   if (!r.ok())
                     return e.fail(c.loc(), r.error);
                   int64_t ax = *shape::normalizeAxis(*axis, shapes[0].size());
                   return e.emit1("concat", c.loc(), inputs, {{"axis", ax}},
                                  {e.typeOf(inputs[0]).dtype, r.shape});
                 }};

  t["slice"] = {{{"x", std::nullopt}, {"axis", std::nullopt},
                 {"start", std::nullopt}, {"end", std::nullopt}},
                [](E &e, const CallExpr &c, BuiltinArgs &a) {
                  Value x = tensorIn(e, a[0], c.loc(), "x");
                  if (x.isError())
                    return x;
                  std::optional<int64_t> axis = e.intArg(a[1], c.loc(), "axis");
                  std::optional<int64_t> start, end;
                  if (axis)
                    start = e.intArg(a[2], c.loc(), "start");
                  if (start)
                    end = e.intArg(a[3], c.loc(), "end");
                  if (!end)
                    return Value::error();
                  const TensorType &t = e.typeOf(x);
                  shape::Result r = shape::slice(t.shape, *axis, *start, *end);
                  if (!r.ok())
                    return e.fail(c.loc(), r.error);
                  int64_t ax = *shape::normalizeAxis(*axis, t.shape.size());
                  const shape::Dim &d = t.shape[ax];
                  if (d.isKnown()) {
                    if (*start < 0)
                      *start += d.value();
                    if (*end < 0)
                      *end += d.value();
                  }
                  Value out = e.emit1("slice", c.loc(), {x},
                                      {{"axis", ax}, {"start", *start},
                                       {"end", *end}},
                                      {t.dtype, r.shape});
                  if (auto bound = e.valueBound(x); bound && !out.isError())
                    e.setValueBound(out, *bound);
                  return out;
                }};

  t["arange"] = {{{"n", std::nullopt}},
                 [](E &e, const CallExpr &c, BuiltinArgs &a) {
                   if (a[0].kind != Value::Kind::Int)
                     return e.fail(c.loc(), "arange needs an integer size, not " +
                                                a[0].describe());
                   if (a[0].dim.isKnown() && a[0].dim.value() <= 0)
                     return e.fail(c.loc(), "arange needs a positive size");
                   Value r = e.emit1("arange", c.loc(), {}, {},
                                     {DType::I64, {a[0].dim}});
                   if (a[0].dim.isKnown() && !r.isError())
                     e.setValueBound(r, a[0].dim.value() - 1);
                   return r;
                 }};

  t["one_hot"] = {{{"ids", std::nullopt}, {"n", std::nullopt}},
                  [](E &e, const CallExpr &c, BuiltinArgs &a) {
                    Value ids = intTensor(e, a[0], c.loc(), "the ids");
                    if (ids.isError())
                      return ids;
                    std::optional<int64_t> n = e.intArg(a[1], c.loc(), "n");
                    if (!n)
                      return Value::error();
                    if (*n <= 0)
                      return e.fail(c.loc(), "one_hot needs a positive number "
                                             "of classes");
                    if (auto bound = e.valueBound(ids); bound && *bound >= *n)
                      return e.fail(c.loc(), "one_hot: ids reach " +
                                                 std::to_string(*bound) +
                                                 " but there are only " +
                                                 std::to_string(*n) +
                                                 " classes");
                    shape::Shape s = e.typeOf(ids).shape;
                    s.push_back(shape::Dim::known(*n));
                    return e.emit1("one_hot", c.loc(), {ids},
                                   {{"num_classes", *n}}, {DType::F32, s});
                  }};

  // Reductions.
  t["sum"] = reduction("reduce_sum", false);
  t["mean"] = reduction("reduce_mean", true);
  t["max"] = reduction("reduce_max", false);
  t["min"] = reduction("reduce_min", false);
  t["softmax"] = softmaxLike("softmax");
  t["log_softmax"] = softmaxLike("log_softmax");

  // Neural-network primitives.
  t["conv2d"] = {{{"x", std::nullopt}, {"w", std::nullopt}, {"stride", I(1)},
                  {"padding", I(0)}, {"dilation", I(1)}, {"groups", I(1)}},
                 [](E &e, const CallExpr &c, BuiltinArgs &a) {
                   Value x = floatTensor(e, a[0], c.loc(), "the input");
                   if (x.isError())
                     return x;
                   Value w = floatTensor(e, a[1], c.loc(), "the weight");
                   if (w.isError())
                     return w;
                   int64_t stride[2], pad[2], dil[2];
                   if (!pairArg(e, a[2], c.loc(), "stride", stride) ||
                       !pairArg(e, a[3], c.loc(), "padding", pad) ||
                       !pairArg(e, a[4], c.loc(), "dilation", dil))
                     return Value::error();
                   std::optional<int64_t> groups = e.intArg(a[5], c.loc(), "groups");
                   if (!groups)
                     return Value::error();
                   const TensorType &xt = e.typeOf(x), &wt = e.typeOf(w);
                   if (xt.dtype != wt.dtype)
                     return e.fail(c.loc(), "conv2d of " + xt.str() + " with " +
                                                wt.str() + ": dtypes differ");
                   shape::Result r = shape::conv2d(xt.shape, wt.shape, stride,
                                                   pad, dil, *groups);
                   if (!r.ok())
                     return e.fail(c.loc(), r.error);
                   return e.emit1("conv2d", c.loc(), {x, w},
                                  {{"stride", std::vector<int64_t>{stride[0], stride[1]}},
                                   {"padding", std::vector<int64_t>{pad[0], pad[1]}},
                                   {"dilation", std::vector<int64_t>{dil[0], dil[1]}},
                                   {"groups", *groups}},
                                  {xt.dtype, r.shape});
                 }};

  for (const char *op : {"max_pool2d", "avg_pool2d"}) {
    t[op] = {{{"x", std::nullopt}, {"k", std::nullopt}, {"stride", None()},
              {"padding", I(0)}},
             [op](E &e, const CallExpr &c, BuiltinArgs &a) {
               Value x = floatTensor(e, a[0], c.loc(), "the input");
               if (x.isError())
                 return x;
               int64_t k[2], stride[2], pad[2];
               if (!pairArg(e, a[1], c.loc(), "the kernel size", k) ||
                   !pairArg(e, a[3], c.loc(), "padding", pad))
                 return Value::error();
               if (a[2].kind == Value::Kind::None) {
                 stride[0] = k[0];
                 stride[1] = k[1];
               } else if (!pairArg(e, a[2], c.loc(), "stride", stride)) {
                 return Value::error();
               }
               const TensorType &xt = e.typeOf(x);
               shape::Result r = shape::pool2d(xt.shape, k, stride, pad);
               if (!r.ok())
                 return e.fail(c.loc(), r.error);
               return e.emit1(op, c.loc(), {x},
                              {{"kernel", std::vector<int64_t>{k[0], k[1]}},
                               {"stride", std::vector<int64_t>{stride[0], stride[1]}},
                               {"padding", std::vector<int64_t>{pad[0], pad[1]}}},
                              {xt.dtype, r.shape});
             }};
  }

  t["global_avg_pool2d"] = {{{"x", std::nullopt}},
                            [](E &e, const CallExpr &c, BuiltinArgs &a) {
                              Value x = floatTensor(e, a[0], c.loc(), "the input");
                              if (x.isError())
                                return x;
                              const TensorType &xt = e.typeOf(x);
                              if (xt.shape.size() != 4)
                                return e.fail(c.loc(), "global_avg_pool2d needs "
                                                       "an NCHW input, not " +
                                                           xt.str());
                              return e.emit1("global_avg_pool2d", c.loc(), {x}, {},
                                             {xt.dtype, {xt.shape[0], xt.shape[1]}});
                            }};

  t["batch_norm_stats"] = {
      {{"x", std::nullopt}, {"axes", std::nullopt}},
      [](E &e, const CallExpr &c, BuiltinArgs &a) {
        std::optional<StatsArgs> s = statsArgs(e, c, a, "batch_norm_stats");
        if (!s)
          return Value::error();
        const TensorType &xt = e.typeOf(s->x);
        TensorType stat{xt.dtype, s->reduced};
        return Value::makeList(e.emit("batch_norm_stats", c.loc(), {s->x},
                                      {{"axes", s->axes}}, {stat, stat}));
      }};

  t["batch_norm_count"] = {
      {{"x", std::nullopt}, {"axes", std::nullopt}},
      [](E &e, const CallExpr &c, BuiltinArgs &a) {
        std::optional<StatsArgs> s = statsArgs(e, c, a, "batch_norm_count");
        if (!s)
          return Value::error();
        return e.emit1("batch_norm_count", c.loc(), {s->x}, {{"axes", s->axes}},
                       TensorType{e.typeOf(s->x).dtype, {}});
      }};

  t["layer_norm_stats"] = {
      {{"x", std::nullopt}},
      [](E &e, const CallExpr &c, BuiltinArgs &a) {
        Value x = floatTensor(e, a[0], c.loc(), "the input");
        if (x.isError())
          return x;
        const TensorType &xt = e.typeOf(x);
        if (xt.shape.empty())
          return e.fail(c.loc(), "layer_norm_stats needs a tensor of rank 1 or "
                                 "more");
        TensorType stat = xt;
        stat.shape.back() = shape::Dim::known(1);
        return Value::makeList(
            e.emit("layer_norm_stats", c.loc(), {x}, {}, {stat, stat}));
      }};

  t["embedding"] = {{{"ids", std::nullopt}, {"table", std::nullopt}},
                    [](E &e, const CallExpr &c, BuiltinArgs &a) {
                      Value ids = intTensor(e, a[0], c.loc(), "the ids");
                      if (ids.isError())
                        return ids;
                      Value table = floatTensor(e, a[1], c.loc(), "the table");
                      if (table.isError())
                        return table;
                      const TensorType &tt = e.typeOf(table);
                      shape::Result r =
                          shape::embedding(e.typeOf(ids).shape, tt.shape);
                      if (!r.ok())
                        return e.fail(c.loc(), r.error);
                      if (auto bound = e.valueBound(ids);
                          bound && tt.shape[0].isKnown() &&
                          *bound >= tt.shape[0].value())
                        return e.fail(c.loc(),
                                      "index " + std::to_string(*bound) +
                                          " is out of range for an embedding "
                                          "table of " + tt.shape[0].str() +
                                          " rows " + tt.str());
                      return e.emit1("embedding", c.loc(), {ids, table}, {},
                                     {tt.dtype, r.shape});
                    }};

  t["dropout"] = {{{"x", std::nullopt}, {"p", F(0.5)}},
                  [](E &e, const CallExpr &c, BuiltinArgs &a) {
                    Value x = floatTensor(e, a[0], c.loc(), "x");
                    if (x.isError())
                      return x;
                    std::optional<double> p = e.numberArg(a[1], c.loc(), "p");
                    if (!p)
                      return Value::error();
                    if (!(*p >= 0 && *p < 1))
                      return e.fail(c.loc(), "dropout probability must be in "
                                             "[0, 1)");
                    if (!e.training() || *p == 0)
                      return x; // Identity in evaluation.
                    return e.emit1("dropout", c.loc(), {x},
                                   {{"p", *p}, {"stream", e.nextNodeIndex()}},
                                   e.typeOf(x));
                  }};

  t["scaled_dot_product_attention"] = {
      {{"q", std::nullopt}, {"k", std::nullopt}, {"v", std::nullopt},
       {"causal", B(false)}},
      [](E &e, const CallExpr &c, BuiltinArgs &a) {
        Value q = floatTensor(e, a[0], c.loc(), "the query");
        if (q.isError())
          return q;
        Value k = floatTensor(e, a[1], c.loc(), "the key");
        if (k.isError())
          return k;
        Value v = floatTensor(e, a[2], c.loc(), "the value");
        if (v.isError())
          return v;
        std::optional<bool> causal = e.boolArg(a[3], c.loc(), "causal");
        if (!causal)
          return Value::error();
        const TensorType &qt = e.typeOf(q);
        if (e.typeOf(k).dtype != qt.dtype || e.typeOf(v).dtype != qt.dtype)
          return e.fail(c.loc(), "attention: q, k and v differ in dtype");
        shape::Result r =
            shape::attention(qt.shape, e.typeOf(k).shape, e.typeOf(v).shape);
        if (!r.ok())
          return e.fail(c.loc(), r.error);
        return e.emit1("attention", c.loc(), {q, k, v}, {{"causal", *causal}},
                       {qt.dtype, r.shape});
      }};

  // Losses and metrics.
  t["cross_entropy"] = classLoss("cross_entropy", true);
  t["nll_loss"] = classLoss("nll_loss", false);
  t["mse_loss"] = pairLoss("mse_loss");
  t["l1_loss"] = pairLoss("l1_loss");
  t["bce_with_logits"] = pairLoss("bce_with_logits");
  t["accuracy"] = {{{"logits", std::nullopt}, {"target", std::nullopt}},
                   [](E &e, const CallExpr &c, BuiltinArgs &a) {
                     Value logits = floatTensor(e, a[0], c.loc(), "the logits");
                     if (logits.isError())
                       return logits;
                     Value target = intTensor(e, a[1], c.loc(), "the target");
                     if (target.isError())
                       return target;
                     shape::Result r = shape::classTargets(
                         e.typeOf(logits).shape, e.typeOf(target).shape);
                     if (!r.ok())
                       return e.fail(c.loc(), r.error);
                     return e.emit1("accuracy", c.loc(), {logits, target}, {},
                                    {DType::F32, {}});
                   }};

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

  // Initialisers (LANGUAGE.md section 6).
  t["zeros"] = initializer("zeros", {});
  t["ones"] = initializer("ones", {});
  t["constant"] = initializer("constant", {{"value", std::nullopt}});
  t["normal"] = initializer("normal", {{"mean", F(0)}, {"std", F(1)}});
  t["uniform"] = initializer("uniform", {{"lo", F(0)}, {"hi", F(1)}});
  t["trunc_normal"] = initializer(
      "trunc_normal", {{"mean", F(0)}, {"std", F(1)}, {"a", F(-2)}, {"b", F(2)}});
  t["kaiming_uniform"] =
      initializer("kaiming_uniform", {{"fan_in", std::nullopt}, {"a", F(0)}});
  t["kaiming_normal"] = initializer(
      "kaiming_normal", {{"fan_in", std::nullopt}, {"gain", F(std::sqrt(2.0))}});
  t["xavier_uniform"] = initializer(
      "xavier_uniform", {{"fan_in", std::nullopt}, {"fan_out", std::nullopt}});
  return t;
}

} // namespace

const std::map<std::string, Builtin> &builtinTable() {
  static const std::map<std::string, Builtin> table = makeTable();
  return table;
}

} // namespace sinter
