//===- RoundResiduals.cpp - Residual connections stored in bf16 -----------===//
//
// With precision.residual BF16, a repeated block's (a layer's) residual
// stream is rounded to bf16 as llm.c keeps it: the stream entering a layer
// (an f32 activation a block's call takes: the embeddings' sum before the
// first layer) and, inside the layer, each sum of the stream and another
// activation of its shape (x + attention(x), then that sum + mlp(...)).
// Rounding is a cast to bf16 and back, so autodiff rounds the gradients
// flowing back through those points the same way, and the passes that
// narrow tensors then store both in bf16. A value is an activation unless
// parameters, states and constants alone make it (a bias, a position
// embedding).
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

func::FuncOp calleeOf(func::CallOp call) {
  auto f = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
  return f && !f.isExternal() ? f : func::FuncOp();
}

/// Values that depend on a model's inputs, in the models and the functions
/// their calls reach: a function's argument when a call passes one, a
/// call's result when the function returns one.
class Activations {
public:
  explicit Activations(ModuleOp module) {
    // The set only grows, so this ends.
    bool changed = true;
    while (changed) {
      changed = false;
      module.walk([&](Operation *op) {
        if (isa<InputOp>(op)) {
          changed |= markAll(op->getResults());
          return;
        }
        if (auto call = dyn_cast<func::CallOp>(op)) {
          func::FuncOp callee = calleeOf(call);
          if (!callee)
            return;
          for (auto [i, operand] : llvm::enumerate(call.getOperands()))
            if (values.contains(operand))
              changed |= values.insert(callee.getArgument(i)).second;
          for (auto ret : callee.getOps<func::ReturnOp>())
            for (auto [i, v] : llvm::enumerate(ret.getOperands()))
              if (values.contains(v))
                changed |= values.insert(call.getResult(i)).second;
          return;
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

bool isF32Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isF32();
}

/// `v` rounded to bf16 and widened back, made next to it.
Value roundTrip(Value v) {
  OpBuilder b(v.getContext());
  b.setInsertionPointAfterValue(v);
  auto type = cast<RankedTensorType>(v.getType());
  auto narrow = CastOp::create(b, v.getLoc(), type.clone(b.getBF16Type()), v);
  return CastOp::create(b, v.getLoc(), type, narrow);
}

/// Inside a block: each f32 sum of the stream (an activation argument, or a
/// sum rounded before it) and another activation of the sum's shape is
/// read rounded; it then carries the stream on.
void roundStreamSums(func::FuncOp block, const Activations &activations,
                     DenseSet<Value> &rounded) {
  DenseSet<Value> stream;
  for (BlockArgument arg : block.getArguments())
    if (isF32Tensor(arg) && activations.contains(arg))
      stream.insert(arg);
  // The rounded sums are new values, activations as the sums were.
  auto isActivation = [&](Value v) { return stream.contains(v) || activations.contains(v); };
  block.walk([&](AddOp op) {
    Value l = op.getLhs(), r = op.getRhs();
    if (!isF32Tensor(op.getResult()) || l.getType() != op.getType() ||
        r.getType() != op.getType() || !isActivation(l) || !isActivation(r) ||
        (!stream.contains(l) && !stream.contains(r)))
      return;
    Value wide = roundTrip(op.getResult());
    op.getResult().replaceAllUsesExcept(wide, wide.getDefiningOp()->getOperand(0)
                                                  .getDefiningOp());
    stream.insert(wide);
    rounded.insert(wide);
  });
}

/// Whether `v` is rounded already: a rounded sum, or a call's result that
/// its function returns rounded.
bool isRounded(Value v, const DenseSet<Value> &rounded) {
  if (rounded.contains(v))
    return true;
  auto call = v.getDefiningOp<func::CallOp>();
  func::FuncOp callee = call ? calleeOf(call) : func::FuncOp();
  if (!callee || !attrs::block.has(callee))
    return false;
  unsigned i = cast<OpResult>(v).getResultNumber();
  return llvm::all_of(callee.getOps<func::ReturnOp>(), [&](func::ReturnOp ret) {
    return rounded.contains(ret.getOperand(i));
  });
}

struct GraphRoundResiduals : impl::GraphRoundResidualsBase<GraphRoundResiduals> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringAttr setting = attrs::residual.get(module);
    if (!setting || setting.getValue() != "bf16")
      return;
    Activations activations(module);
    DenseSet<Value> rounded;
    for (auto f : module.getOps<func::FuncOp>())
      if (attrs::block.has(f))
        roundStreamSums(f, activations, rounded);
    // The stream entering a layer: the call takes it rounded (once per
    // value), other readers as they were.
    DenseMap<Value, Value> entering;
    module.walk([&](func::CallOp call) {
      func::FuncOp callee = calleeOf(call);
      if (!callee || !attrs::block.has(callee))
        return;
      for (OpOperand &operand : call->getOpOperands()) {
        Value v = operand.get();
        if (!isF32Tensor(v) || !activations.contains(v) || isRounded(v, rounded))
          continue;
        Value &wide = entering[v];
        if (!wide)
          wide = roundTrip(v);
        operand.set(wide);
      }
    });
  }
};

} // namespace
} // namespace sinter::graph
