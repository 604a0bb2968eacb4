//===- Builtins.cpp - Operations, losses and initialisers of Sinter -------===//
//
// LANGUAGE.md sections 6 and 7. Each builtin checks its arguments, asks the
// shared shape rules for the result, and emits one graph node; the
// families live in frontend/builtins/.
//
//===----------------------------------------------------------------------===//

#include "frontend/builtins/Support.h"

namespace sinter {

const std::map<std::string, Builtin> &builtinTable() {
  static const builtins::Table table = [] {
    builtins::Table t;
    builtins::addMath(t);
    builtins::addShapes(t);
    builtins::addNeuralNet(t);
    builtins::addLosses(t);
    builtins::addInitialisers(t);
    return t;
  }();
  return table;
}

} // namespace sinter
