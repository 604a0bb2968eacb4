//===- SemaArgs.cpp - Compile-time argument readers -----------------------===//
//
// The readers builtins use for arguments that must be known at compile
// time; on failure they report and return nullopt.
//
//===----------------------------------------------------------------------===//

#include "frontend/Elaborator.h"

namespace sinter {
using namespace ast;

std::optional<int64_t> Elaborator::intArg(const Value &v, Loc loc,
                                          const char *what) {
  if (v.isKnownInt())
    return v.dim.value();
  if (v.kind == Value::Kind::Int)
    fail(loc, std::string(what) + " must be a known integer, but " +
                  v.dim.str() + " is symbolic; bind it with -D");
  else if (!v.isError())
    fail(loc, std::string(what) + " must be an integer, not " + v.describe());
  return std::nullopt;
}

std::optional<double> Elaborator::numberArg(const Value &v, Loc loc,
                                            const char *what) {
  if (v.isNumber())
    return v.number();
  if (!v.isError())
    fail(loc, std::string(what) + " must be a number, not " + v.describe());
  return std::nullopt;
}

std::optional<bool> Elaborator::boolArg(const Value &v, Loc loc,
                                        const char *what) {
  if (v.kind == Value::Kind::Bool)
    return v.b;
  if (!v.isError())
    fail(loc, std::string(what) + " must be true or false, not " +
                  v.describe());
  return std::nullopt;
}

std::optional<std::string> Elaborator::stringArg(const Value &v, Loc loc,
                                                 const char *what) {
  if (v.kind == Value::Kind::String)
    return v.s;
  if (!v.isError())
    fail(loc, std::string(what) + " must be a string, not " + v.describe());
  return std::nullopt;
}

std::optional<std::vector<int64_t>>
Elaborator::intListArg(const Value &v, Loc loc, const char *what) {
  std::vector<int64_t> out;
  if (v.kind != Value::Kind::List) {
    std::optional<int64_t> one = intArg(v, loc, what);
    if (!one)
      return std::nullopt;
    return std::vector<int64_t>{*one};
  }
  for (const Value &e : v.list) {
    std::optional<int64_t> i = intArg(e, loc, what);
    if (!i)
      return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

std::optional<shape::Shape> Elaborator::shapeArg(const Value &v, Loc loc,
                                                 const char *what) {
  if (v.kind != Value::Kind::List) {
    fail(loc, std::string(what) + " must be a list of sizes, not " +
                  v.describe());
    return std::nullopt;
  }
  shape::Shape out;
  for (const Value &e : v.list) {
    if (e.kind != Value::Kind::Int) {
      fail(loc, std::string(what) + " must hold sizes, not " + e.describe());
      return std::nullopt;
    }
    out.push_back(e.dim);
  }
  return out;
}

std::optional<int> Elaborator::tensorArg(const Value &v, Loc loc,
                                         const char *what) {
  if (v.isTensor())
    return v.tensor;
  if (!v.isError())
    fail(loc, std::string(what) + " must be a tensor, not " + v.describe());
  return std::nullopt;
}

} // namespace sinter
