//===- Initialisers.cpp - Parameter initialisers --------------------------===//
//
// LANGUAGE.md section 6: each checks its arguments at compile time; the
// runtime draws the values.
//
//===----------------------------------------------------------------------===//

#include "frontend/builtins/Support.h"

#include <cmath>

namespace sinter::builtins {
namespace {

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

} // namespace

void addInitialisers(Table &t) {
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
}

} // namespace sinter::builtins
