//===- Autodiff.cpp - Reverse-mode gradients of the loss -------------------===//
//
// The model is differentiated by one reverse sweep. A call of a repeated
// block is differentiated once per block, not per call: every layer calls
// the block's forward function, and its backward function in the sweep
// (BlockDerivative.h).
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/Transforms/Backpropagate.h"
#include "dialects/Graph/Transforms/BlockDerivative.h"
#include "dialects/Graph/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;

namespace sinter::graph {
#define GEN_PASS_DEF_GRAPHAUTODIFF
#include "dialects/Graph/Transforms/Passes.h.inc"

namespace {

/// What the model's calls need: for each block, the results whose gradient
/// some call needs and the arguments that get one there; then the block's
/// forward and backward pair.
class CallDerivatives {
public:
  CallDerivatives(Dependences &deps, SymbolTable &symbols)
      : deps(deps), symbols(symbols) {}

  LogicalResult build(ArrayRef<Operation *> ops, const DenseSet<Value> &active,
                      Value loss) {
    // Values the loss depends on.
    DenseSet<Value> useful = {loss};
    for (Operation *op : llvm::reverse(ops)) {
      auto call = dyn_cast<func::CallOp>(op);
      for (auto [j, r] : llvm::enumerate(op->getResults())) {
        if (!useful.contains(r))
          continue;
        if (!call) {
          useful.insert(op->operand_begin(), op->operand_end());
          break;
        }
        for (unsigned i : deps.of(call)[j].set_bits())
          useful.insert(call.getOperand(i));
      }
    }
    for (Operation *op : ops) {
      auto call = dyn_cast<func::CallOp>(op);
      if (!call)
        continue;
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      ArrayRef<llvm::BitVector> depends = deps.of(callee);
      auto [it, added] = wanted.try_emplace(callee);
      Wanted &w = it->second;
      if (added) {
        w.seeded.resize(call.getNumResults());
        w.differentiated.resize(call.getNumOperands());
      }
      for (auto [j, r] : llvm::enumerate(call.getResults())) {
        if (!active.contains(r) || !useful.contains(r))
          continue;
        w.seeded.set(j);
        for (unsigned i : depends[j].set_bits())
          if (active.contains(call.getOperand(i)))
            w.differentiated.set(i);
      }
    }
    for (auto &[callee, w] : wanted) {
      if (w.seeded.none() || w.differentiated.none())
        continue;
      SmallVector<unsigned> seeded(w.seeded.set_bits());
      SmallVector<unsigned> differentiated(w.differentiated.set_bits());
      FailureOr<BlockDerivative> d =
          differentiateBlock(callee, seeded, differentiated, symbols);
      if (failed(d))
        return failure();
      derivatives.try_emplace(callee, std::move(*d));
    }
    return success();
  }

  /// Calls each differentiated block's forward function instead.
  void callForward(Block &body) {
    for (auto call : llvm::make_early_inc_range(body.getOps<func::CallOp>())) {
      auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
      auto found = derivatives.find(callee);
      if (found == derivatives.end())
        continue;
      OpBuilder b(call);
      auto forward = func::CallOp::create(b, call.getLoc(), found->second.forward,
                                          call.getOperands());
      for (auto [old, now] : llvm::zip(call.getResults(), forward.getResults()))
        old.replaceAllUsesWith(now);
      forwardCalls[forward] = &found->second;
      call.erase();
    }
  }

  /// The backward call of a forward call.
  LogicalResult gradients(func::CallOp call, ArrayRef<Value> resultGrads,
                          SmallVectorImpl<Value> &operandGrads, OpBuilder &b) {
    auto found = forwardCalls.find(call);
    if (found == forwardCalls.end())
      return call.emitError("internal error: no gradient for a call of ")
             << call.getCallee();
    const BlockDerivative &d = *found->second;
    SmallVector<Value> inputs;
    for (const BlockDerivative::Saved &s : d.saved)
      inputs.push_back(s.fromArgument ? call.getOperand(s.index)
                                      : call.getResult(s.index));
    bool any = false;
    for (unsigned j : d.seeded) {
      Value g = resultGrads[j];
      any |= bool(g);
      inputs.push_back(g ? g
                         : zerosLike(b, call.getLoc(), call.getResult(j).getType()));
    }
    operandGrads.assign(call.getNumOperands(), Value());
    if (!any)
      return success();
    auto backward = func::CallOp::create(b, call.getLoc(), d.backward, inputs);
    for (auto [k, a] : llvm::enumerate(d.differentiated))
      operandGrads[a] = backward.getResult(k);
    return success();
  }

  /// The blocks no call is left to.
  void eraseReplaced(ModuleOp module) {
    for (auto &[callee, d] : derivatives)
      if (SymbolTable::symbolKnownUseEmpty(callee, module))
        callee.erase();
  }

private:
  struct Wanted {
    llvm::BitVector seeded, differentiated;
  };
  Dependences &deps;
  SymbolTable &symbols;
  llvm::MapVector<func::FuncOp, Wanted> wanted;
  llvm::MapVector<func::FuncOp, BlockDerivative> derivatives;
  DenseMap<Operation *, const BlockDerivative *> forwardCalls;
};

SmallVector<Operation *> opsOf(Block &body) {
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  return ops;
}

LogicalResult differentiate(ModelOp model, SymbolTable &symbols) {
  Block &body = *model.getBody();
  LossOp loss;
  SmallVector<ParamOp> params;
  SmallVector<Value> roots;
  for (Operation &op : body) {
    if (auto l = dyn_cast<LossOp>(op))
      loss = l;
    if (auto p = dyn_cast<ParamOp>(op)) {
      params.push_back(p);
      roots.push_back(p.getResult());
    }
  }
  if (!loss)
    return success();
  auto module = model->getParentOfType<ModuleOp>();
  Dependences deps(module);
  DenseSet<Value> active = activeValues(opsOf(body), roots, deps);
  if (!active.contains(loss.getValue()))
    return success();

  CallDerivatives calls(deps, symbols);
  if (failed(calls.build(opsOf(body), active, loss.getValue())))
    return failure();
  calls.callForward(body);
  SmallVector<Operation *> forward = opsOf(body);
  active = activeValues(forward, roots, deps);

  // Reverse accumulation from d(loss)/d(loss) = 1.
  OpBuilder b = OpBuilder::atBlockEnd(&body);
  DenseMap<Value, Value> grads;
  auto lossType = cast<RankedTensorType>(loss.getValue().getType());
  grads[loss.getValue()] = ConstantOp::create(
      b, loss.getLoc(),
      DenseElementsAttr::get(lossType,
                             b.getFloatAttr(lossType.getElementType(), 1.0)));
  auto callGradients = [&](func::CallOp call, ArrayRef<Value> resultGrads,
                           SmallVectorImpl<Value> &operandGrads,
                           OpBuilder &builder) {
    return calls.gradients(call, resultGrads, operandGrads, builder);
  };
  if (failed(backpropagate(forward, active, grads, b, callGradients)))
    return failure();
  for (ParamOp p : params)
    if (Value g = grads.lookup(p.getResult()))
      GradientOp::create(b, p.getLoc(), p.getName(), g);
  calls.eraseReplaced(module);
  return success();
}

struct GraphAutodiff : public impl::GraphAutodiffBase<GraphAutodiff> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (ModelOp model : llvm::to_vector(module.getOps<ModelOp>()))
      if (model.getPhase() == "train" && failed(differentiate(model, symbols)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::graph
