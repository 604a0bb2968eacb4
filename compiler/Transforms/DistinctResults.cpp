//===- DistinctResults.cpp - One allocation per returned buffer ------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_DISTINCTRESULTS
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// Whether `v` is a buffer of its own that only this result may take over:
/// a fresh allocation, returned once.
bool ownsBuffer(Value v, const DenseSet<Value> &seen) {
  return v.getDefiningOp<memref::AllocOp>() && !seen.contains(v);
}

/// A returned reshape of a fresh allocation that nothing else returns (a
/// matmul's [B*T, N] product returned as [B, T, N]) becomes an allocation
/// of the returned shape, which the computation reaches through the
/// inverse reshape: the result then takes the buffer over instead of
/// copying it. The new allocation, or null.
Value allocateReturnedShape(Value v, func::ReturnOp ret, const DenseSet<Value> &seen) {
  Operation *reshape = v.getDefiningOp();
  if (!isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(reshape))
    return {};
  Value source = reshape->getOperand(0);
  auto alloc = source.getDefiningOp<memref::AllocOp>();
  auto type = cast<MemRefType>(v.getType());
  if (!alloc || seen.contains(source) || !type.getLayout().isIdentity() ||
      !alloc.getType().getLayout().isIdentity() ||
      llvm::is_contained(ret->getOperands(), source))
    return {};
  OpBuilder b(alloc);
  Location loc = alloc.getLoc();
  auto whole = memref::AllocOp::create(b, loc, type, alloc.getAlignmentAttr());
  Value asBefore;
  if (auto expand = dyn_cast<memref::ExpandShapeOp>(reshape))
    asBefore = memref::CollapseShapeOp::create(b, loc, whole,
                                               expand.getReassociationIndices());
  else
    asBefore = memref::ExpandShapeOp::create(
        b, loc, alloc.getType().getShape(), whole,
        cast<memref::CollapseShapeOp>(reshape).getReassociationIndices());
  alloc->replaceAllUsesWith(ValueRange{asBefore});
  alloc->erase();
  return whole;
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
    if (Value whole = allocateReturnedShape(v, ret, seen)) {
      operand.set(whole);
      seen.insert(whole);
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
