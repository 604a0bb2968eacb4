//===- NeuralNet.cpp - Convolutions, pooling, statistics, attention -------===//
//
// The neural-network primitives of LANGUAGE.md section 7.
//
//===----------------------------------------------------------------------===//

#include "frontend/builtins/Support.h"

#include <cmath>

namespace sinter::builtins {
namespace {

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

} // namespace

/// conv2d and the poolings.
static void addConvolutionsAndPooling(Table &t) {
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
}

/// Batch and layer statistics, embedding, dropout and attention.
static void addStatisticsAndAttention(Table &t) {
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

}

void addNeuralNet(Table &t) {
  addConvolutionsAndPooling(t);
  addStatisticsAndAttention(t);
}

} // namespace sinter::builtins
