//===- SourceText.h - An op's .sn position as text ---------------*- C++ -*-===//
//
// What the runtime prints for a kernel or library call that fails: the
// position of the .sn op it computes.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TARGET_HOST_SOURCETEXT_H
#define SINTER_TARGET_HOST_SOURCETEXT_H

#include "mlir/IR/Location.h"

#include <string>

namespace sinter::host {

/// `file:line:col` of the innermost position in `loc` (in a called .sn
/// function, the op there); "" when it has none.
std::string sourceOf(mlir::Location loc);

/// sourceOf(loc), followed by ", called at file:line:col" with the user's
/// outermost call when the op is inside a called function.
std::string sourceWithCaller(mlir::Location loc);

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_SOURCETEXT_H
