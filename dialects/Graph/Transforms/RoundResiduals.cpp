//===- RoundResiduals.cpp - Residual connections stored in bf16 -----------===//
//
// With precision.residual BF16, the sum of two activations (a residual
// connection: x + attention(x), x + mlp(x)) is rounded to bf16 where it is
// made, and so is every activation a repeated block (a layer) takes: the
// stream between layers, as llm.c keeps it. Rounding is a cast to bf16 and
// back, so autodiff rounds the gradient flowing back through the sum the
// same way, and the passes that narrow tensors then store both in bf16.
// A value is an activation unless it is computed from parameters, states
// and constants alone (a bias, a position embedding); a repeated block's
// argument is one when some call passes one.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace sinter::graph {
#define GEN_PASS_DEF_GRAPHROUNDRESIDUALS
#include "dialects/Graph/Transforms/Passes.h.inc"

namespace {

/// Values that depend on a model's inputs, in the models and the functions
/// their calls reach.
class Activations {
public:
  explicit Activations(ModuleOp module) {
    // Arguments become activations as calls pass activations; repeat until
    // nothing changes (a block calls no block that calls it back).
    bool changed = true;
    while (changed) {
      changed = false;
      module.walk([&](Operation *op) {
        if (isa<InputOp>(op)) {
          changed |= markAll(op->getResults());
          return;
        }
        if (auto call = dyn_cast<func::CallOp>(op)) {
          auto callee =
              SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
          for (auto [i, operand] : llvm::enumerate(call.getOperands()))
            if (callee && !callee.isExternal() && values.contains(operand))
              changed |= values.insert(callee.getArgument(i)).second;
        }
        if (llvm::any_of(op->getOperands(), [&](Value v) { return values.contains(v); }))
          changed |= markAll(op->getResults());
      });
    }
  }

  bool contains(Value v) const { return values.contains(v); }

private:
  bool markAll(ResultRange results) {
    bool added = false;
    for (Value r : results)
      added |= values.insert(r).second;
    return added;
  }

  DenseSet<Value> values;
};

/// Whether `v` is a bf16 value widened (rounded already), here or as the
/// result a called function returns.
bool isRounded(Value v) {
  if (auto call = v.getDefiningOp<func::CallOp>()) {
    auto callee =
        SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
    if (!callee || callee.isExternal())
      return false;
    unsigned i = cast<OpResult>(v).getResultNumber();
    return llvm::all_of(callee.getOps<func::ReturnOp>(), [&](func::ReturnOp ret) {
      return isRounded(ret.getOperand(i));
    });
  }
  auto cast = v.getDefiningOp<CastOp>();
  return cast && getElementTypeOrSelf(cast.getInput().getType()).isBF16();
}

/// Every reader of `v` reads it rounded to bf16 and widened back.
void roundForReaders(Value v) {
  OpBuilder b(v.getContext());
  b.setInsertionPointAfterValue(v);
  auto type = cast<RankedTensorType>(v.getType());
  auto narrow = CastOp::create(b, v.getLoc(), type.clone(b.getBF16Type()), v);
  Value wide = CastOp::create(b, v.getLoc(), type, narrow);
  v.replaceAllUsesExcept(wide, narrow);
}

struct GraphRoundResiduals : impl::GraphRoundResidualsBase<GraphRoundResiduals> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringAttr setting = attrs::residual.get(module);
    if (!setting || setting.getValue() != "bf16")
      return;
    Activations activations(module);
    SmallVector<AddOp> sums;
    module.walk([&](AddOp op) {
      auto type = cast<RankedTensorType>(op.getType());
      if (type.getElementType().isF32() && op.getLhs().getType() == type &&
          op.getRhs().getType() == type && activations.contains(op.getLhs()) &&
          activations.contains(op.getRhs()))
        sums.push_back(op);
    });
    // The stream entering a layer: an f32 activation a repeated block's call
    // takes (the embeddings' sum, before the first layer), unless rounded.
    SmallVector<OpOperand *> entering;
    module.walk([&](func::CallOp call) {
      auto callee =
          SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
      if (!callee || !attrs::block.has(callee))
        return;
      for (OpOperand &operand : call->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (type && type.getElementType().isF32() && activations.contains(operand.get()))
          entering.push_back(&operand);
      }
    });
    for (AddOp op : sums)
      roundForReaders(op.getResult());
    for (OpOperand *operand : entering)
      if (!isRounded(operand->get()))
        roundForReaders(operand->get());
  }
};

} // namespace
} // namespace sinter::graph
