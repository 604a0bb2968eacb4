//===- Support.h - What the builtins' files share ------------------*- C++ -*-===//
//
// The builtins of LANGUAGE.md sections 6 and 7 live in one file per family
// (Math, Shapes, NeuralNet, Losses, Initialisers); each adds its entries to
// the table Builtins.cpp assembles, with these helpers.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_FRONTEND_BUILTINS_SUPPORT_H
#define SINTER_FRONTEND_BUILTINS_SUPPORT_H

#include "frontend/Elaborator.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace sinter::builtins {
using namespace ast;
using shape::DType;
using E = Elaborator;
using Attrs = std::vector<std::pair<std::string, AttrValue>>;
using Table = std::map<std::string, Builtin>;

inline Value I(int64_t v) { return Value::integer(v); }
inline Value F(double v) { return Value::floating(v); }
inline Value B(bool v) { return Value::boolean(v); }
inline Value S(const char *v) { return Value::string(v); }
inline Value None() { return Value::none(); }

/// The tensor argument `v`, or poison after reporting.
Value tensorIn(E &e, const Value &v, Loc loc, const char *what);
/// The same, which must be floating-point, or an integer tensor.
Value floatTensor(E &e, const Value &v, Loc loc, const char *what);
Value intTensor(E &e, const Value &v, Loc loc, const char *what);
/// `k` or `[kh, kw]`.
bool pairArg(E &e, const Value &v, Loc loc, const char *what, int64_t out[2]);

/// Each family's builtins, added to `t`.
void addMath(Table &t);
void addShapes(Table &t);
void addNeuralNet(Table &t);
void addLosses(Table &t);
void addInitialisers(Table &t);

} // namespace sinter::builtins

#endif // SINTER_FRONTEND_BUILTINS_SUPPORT_H
