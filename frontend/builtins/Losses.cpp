//===- Losses.cpp - Losses and metrics ------------------------------------===//
//
// A loss's reduction (mean, sum, none, or PyTorch's legacy pair) decides
// what the train step normalizes (LANGUAGE.md section 9).
//
//===----------------------------------------------------------------------===//

#include "frontend/builtins/Support.h"

#include <cmath>

namespace sinter::builtins {
namespace {

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

} // namespace

void addLosses(Table &t) {
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
}

} // namespace sinter::builtins
