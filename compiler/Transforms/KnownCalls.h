//===- KnownCalls.h - Private functions and all their calls -----*- C++ -*-===//
//
// A pass may change a function's signature when it can change every call
// with it: a private function that nothing references but its calls.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TRANSFORMS_KNOWNCALLS_H
#define SINTER_TRANSFORMS_KNOWNCALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"

namespace sinter {

/// Each private function with a body that only calls reference, and its
/// calls, in the module's order.
llvm::MapVector<mlir::func::FuncOp, llvm::SmallVector<mlir::func::CallOp>>
knownCalls(mlir::ModuleOp module);

/// A call of `f` with `operands`, made before `call` once `f`'s signature
/// changed, with `call`'s attributes and inlining; `call` is left for the
/// caller to replace.
mlir::func::CallOp remadeCall(mlir::func::CallOp call, mlir::func::FuncOp f,
                              mlir::ValueRange operands);

} // namespace sinter

#endif // SINTER_TRANSFORMS_KNOWNCALLS_H
