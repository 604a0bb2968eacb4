//===- DistinctResults.cpp - One allocation per returned buffer ------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"

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

/// A result of a private function, called only, that is a reshape of
/// another of its results (attention's output returned both as [B, T, C]
/// and as [B*T, C]) is dropped: each call reshapes that other result, and
/// the two share one buffer instead of a copy.
void dropReshapedResults(func::FuncOp f, ModuleOp module) {
  if (!f.isPrivate() || !f.getBody().hasOneBlock())
    return;
  SmallVector<func::CallOp> calls;
  std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(f, module);
  if (!uses)
    return;
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<func::CallOp>(use.getUser());
    if (!call || call.getArgAttrsAttr() || call.getResAttrsAttr())
      return;
    calls.push_back(call);
  }
  auto ret = cast<func::ReturnOp>(f.front().getTerminator());
  unsigned n = ret.getNumOperands();
  llvm::BitVector dropped(n);
  SmallVector<std::pair<unsigned, unsigned>> reshapedFrom; // (dropped, kept)
  for (unsigned i = 0; i < n; ++i) {
    Operation *reshape = ret.getOperand(i).getDefiningOp();
    if (!isa_and_nonnull<memref::ExpandShapeOp, memref::CollapseShapeOp>(reshape))
      continue;
    for (unsigned j = 0; j < n; ++j)
      if (j != i && !dropped[j] && ret.getOperand(j) == reshape->getOperand(0)) {
        dropped.set(i);
        reshapedFrom.push_back({i, j});
        break;
      }
  }
  if (dropped.none())
    return;
  SmallVector<Value> kept;
  for (unsigned i = 0; i < n; ++i)
    if (!dropped[i])
      kept.push_back(ret.getOperand(i));
  SmallVector<Operation *> reshapes;
  for (auto [i, j] : reshapedFrom)
    reshapes.push_back(ret.getOperand(i).getDefiningOp());
  ret->setOperands(kept);
  (void)f.eraseResults(dropped);
  // The kept results' new positions.
  SmallVector<unsigned> position(n);
  for (unsigned i = 0, k = 0; i < n; ++i)
    if (!dropped[i])
      position[i] = k++;
  for (func::CallOp call : calls) {
    OpBuilder b(call);
    auto made = func::CallOp::create(b, call.getLoc(), f, call.getOperands());
    made->setDiscardableAttrs(call->getDiscardableAttrDictionary());
    made.setNoInline(call.getNoInline());
    for (unsigned i = 0; i < n; ++i)
      if (!dropped[i])
        call.getResult(i).replaceAllUsesWith(made.getResult(position[i]));
    for (auto [pair, reshape] : llvm::zip_equal(reshapedFrom, reshapes)) {
      IRMapping mapping;
      mapping.map(reshape->getOperand(0), made.getResult(position[pair.second]));
      call.getResult(pair.first).replaceAllUsesWith(b.clone(*reshape, mapping)->getResult(0));
    }
    call->erase();
  }
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
    ModuleOp module = getOperation();
    for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (attrs::block.has(f))
        dropReshapedResults(f, module);
    module.walk([](func::FuncOp f) {
      if (attrs::phase.has(f) || attrs::block.has(f))
        f.walk(copyShared);
    });
  }
};

} // namespace
} // namespace sinter
