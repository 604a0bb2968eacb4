//===- Support.cpp - What the builtins' files share -----------------------===//

#include "frontend/builtins/Support.h"

namespace sinter::builtins {

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

} // namespace sinter::builtins
