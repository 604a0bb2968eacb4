//===- KnownCalls.cpp - Private functions and all their calls -------------===//

#include "compiler/Transforms/KnownCalls.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace sinter {

llvm::MapVector<func::FuncOp, SmallVector<func::CallOp>> knownCalls(ModuleOp module) {
  llvm::MapVector<StringAttr, SmallVector<func::CallOp>> calls;
  DenseSet<StringAttr> otherUses;
  module.walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op))
      calls[call.getCalleeAttr().getAttr()].push_back(call);
    else if (!isa<func::FuncOp>(op))
      for (NamedAttribute attr : op->getAttrs())
        if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
          otherUses.insert(ref.getAttr());
  });
  llvm::MapVector<func::FuncOp, SmallVector<func::CallOp>> known;
  for (auto f : module.getOps<func::FuncOp>()) {
    auto it = calls.find(f.getSymNameAttr());
    if (f.isPrivate() && !f.isExternal() && it != calls.end() &&
        !otherUses.contains(f.getSymNameAttr()))
      known[f] = it->second;
  }
  return known;
}

func::CallOp remadeCall(func::CallOp call, func::FuncOp f, ValueRange operands) {
  OpBuilder b(call);
  auto made = func::CallOp::create(b, call.getLoc(), f, operands);
  made->setDiscardableAttrs(call->getDiscardableAttrDictionary());
  made.setNoInline(call.getNoInline());
  return made;
}

} // namespace sinter
