//===- Shapes.cpp - Reshapes, transposes, slices and friends --------------===//
//
// Each checks its arguments and asks the shared shape rules for the result.
//
//===----------------------------------------------------------------------===//

#include "frontend/builtins/Support.h"

#include <cmath>

namespace sinter::builtins {
/// reshape, transpose, concat and slice.
static void addReshapes(Table &t) {
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
}

/// arange and one_hot.
static void addIndexTensors(Table &t) {
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
}

void addShapes(Table &t) {
  addReshapes(t);
  addIndexTensors(t);
}

} // namespace sinter::builtins
