//===- FoldInPlaceUpdates.cpp - Updated arguments stay in their buffers ---===//
//
// A train step returns each parameter and optimizer moment it updates, with
// `sinter.updates` naming the argument it replaces. After bufferization such
// a result must be that argument's own buffer: the update was written in
// place, and the result is dropped, so the step writes the runtime's
// parameter buffers directly. Anything else (a copy the bufferization chose)
// is an internal error, never a silent stale parameter.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_FOLDINPLACEUPDATES
#include "compiler/Transforms/Passes.h.inc"

namespace {

Value stripCasts(Value v) {
  while (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  return v;
}

LogicalResult fold(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.front().getTerminator());
  llvm::BitVector dropped(ret.getNumOperands());
  for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
    auto arg = attrs::updates.getResult(func, i);
    if (!arg)
      continue;
    Value returned = stripCasts(ret.getOperand(i));
    if (returned != func.getArgument(unsigned(arg.getInt())))
      return func.emitError("internal error: result ")
             << i << " of the step updates argument " << arg.getInt()
             << " but is not computed in its buffer";
    dropped.set(i);
  }
  if (dropped.none())
    return success();
  ret->eraseOperands(dropped);
  return func.eraseResults(dropped);
}

struct FoldInPlaceUpdates
    : public impl::FoldInPlaceUpdatesBase<FoldInPlaceUpdates> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(fold(func)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace sinter
