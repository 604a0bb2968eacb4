//===- Autodiff.cpp - Reverse-mode gradients of the loss -------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SetVector.h"

namespace sinter::graph {
#define GEN_PASS_DEF_GRAPHAUTODIFF
#include "dialects/Graph/Transforms/Passes.h.inc"
} // namespace sinter::graph

using namespace mlir;

namespace sinter::graph {
namespace {

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

LogicalResult differentiate(ModelOp model) {
  Block &body = *model.getBody();
  LossOp loss;
  for (Operation &op : body)
    if (auto l = dyn_cast<LossOp>(op))
      loss = l;
  if (!loss)
    return success();

  // Values that depend on a parameter, in program order.
  llvm::SetVector<Value> active;
  SmallVector<ParamOp> params;
  for (Operation &op : body) {
    if (auto p = dyn_cast<ParamOp>(op)) {
      params.push_back(p);
      active.insert(p.getResult());
      continue;
    }
    if (llvm::any_of(op.getOperands(), [&](Value v) { return active.count(v); }))
      for (Value r : op.getResults())
        if (isFloatTensor(r))
          active.insert(r);
  }
  if (!active.count(loss.getValue()))
    return success();

  // Reverse accumulation from d(loss)/d(loss) = 1.
  OpBuilder b = OpBuilder::atBlockEnd(&body);
  DenseMap<Value, Value> grads;
  auto lossType = cast<RankedTensorType>(loss.getValue().getType());
  grads[loss.getValue()] = ConstantOp::create(
      b, loss.getLoc(),
      DenseElementsAttr::get(lossType,
                             b.getFloatAttr(lossType.getElementType(), 1.0)));
  SmallVector<Operation *> forward;
  for (Operation &op : body)
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      resultGrads.push_back(grads.lookup(r));
      any |= bool(resultGrads.back());
    }
    if (!any || isa<ParamOp>(op))
      continue;
    if (llvm::none_of(op->getOperands(), [&](Value v) { return active.count(v); }))
      continue;
    auto differentiable = dyn_cast<GradientOpInterface>(op);
    if (!differentiable)
      return op->emitError() << "'" << op->getName()
                             << "' has no gradient yet, and the loss depends "
                                "on a parameter through it";
    SmallVector<Value> operandGrads;
    if (failed(differentiable.buildGradients(b, resultGrads, operandGrads)))
      return failure();
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!g || !active.count(operand))
        continue;
      Value &acc = grads[operand];
      acc = acc ? Value(AddOp::create(b, op->getLoc(), acc, g)) : g;
    }
  }
  for (ParamOp p : params)
    if (Value g = grads.lookup(p.getResult()))
      GradientOp::create(b, p.getLoc(), p.getName(), g);
  return success();
}

struct GraphAutodiff : public impl::GraphAutodiffBase<GraphAutodiff> {
  void runOnOperation() override {
    for (ModelOp model : getOperation().getOps<ModelOp>())
      if (model.getPhase() == "train" && failed(differentiate(model)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::graph
