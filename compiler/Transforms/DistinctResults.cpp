//===- DistinctResults.cpp - One allocation per returned buffer ------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace sinter {
#define GEN_PASS_DEF_DISTINCTRESULTS
#include "compiler/Transforms/Passes.h.inc"
} // namespace sinter

using namespace mlir;

namespace sinter {
namespace {

/// Whether `v` is a buffer of its own that only this result may take over:
/// a fresh allocation, returned once.
bool ownsBuffer(Value v, const DenseSet<Value> &seen) {
  return v.getDefiningOp<memref::AllocOp>() && !seen.contains(v);
}

void copyShared(func::ReturnOp ret) {
  OpBuilder b(ret);
  DenseSet<Value> seen;
  for (OpOperand &operand : ret->getOpOperands()) {
    Value v = operand.get();
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape() || ownsBuffer(v, seen)) {
      seen.insert(v);
      continue;
    }
    Value copy = memref::AllocOp::create(
        b, ret.getLoc(),
        MemRefType::get(type.getShape(), type.getElementType()));
    memref::CopyOp::create(b, ret.getLoc(), v, copy);
    operand.set(copy);
  }
}

struct DistinctResults : public impl::DistinctResultsBase<DistinctResults> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp f) {
      if (attrs::phase.has(f) || attrs::block.has(f))
        f.walk(copyShared);
    });
  }
};

} // namespace
} // namespace sinter
