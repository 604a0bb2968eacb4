//===- Backpropagate.cpp - Reverse accumulation over a block of graph ops -===//

#include "dialects/Graph/Transforms/Backpropagate.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace sinter::graph {

bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

Value zerosLike(OpBuilder &b, Location loc, Type type) {
  auto t = cast<RankedTensorType>(type);
  return ConstantOp::create(
      b, loc, DenseElementsAttr::get(t, b.getZeroAttr(t.getElementType())));
}

ArrayRef<llvm::BitVector> Dependences::of(func::CallOp call) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      module, call.getCalleeAttr());
  return of(callee);
}

ArrayRef<llvm::BitVector> Dependences::of(func::FuncOp function) {
  if (auto known = cache.find(function); known != cache.end())
    return known->second;
  Block &body = function.getBody().front();
  unsigned n = body.getNumArguments();
  DenseMap<Value, llvm::BitVector> on;
  for (BlockArgument arg : body.getArguments()) {
    on[arg] = llvm::BitVector(n);
    on[arg].set(arg.getArgNumber());
  }
  for (Operation &op : body) {
    llvm::BitVector bits(n);
    for (Value v : op.getOperands())
      bits |= on[v];
    for (Value r : op.getResults())
      on[r] = bits;
  }
  SmallVector<llvm::BitVector> results;
  for (Value v : body.getTerminator()->getOperands())
    results.push_back(on[v]);
  return cache[function] = std::move(results);
}

DenseSet<Value> activeValues(ArrayRef<Operation *> ops, ArrayRef<Value> seeds,
                             Dependences &deps) {
  DenseSet<Value> active(seeds.begin(), seeds.end());
  auto isActive = [&](Value v) { return active.contains(v); };
  for (Operation *op : ops) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      ArrayRef<llvm::BitVector> depends = deps.of(call);
      for (auto [j, r] : llvm::enumerate(call.getResults())) {
        if (!isFloatTensor(r))
          continue;
        for (unsigned i : depends[j].set_bits())
          if (isActive(call.getOperand(i))) {
            active.insert(r);
            break;
          }
      }
      continue;
    }
    if (llvm::any_of(op->getOperands(), isActive))
      for (Value r : op->getResults())
        if (isFloatTensor(r))
          active.insert(r);
  }
  return active;
}

LogicalResult backpropagate(ArrayRef<Operation *> ops,
                            const DenseSet<Value> &active,
                            DenseMap<Value, Value> &grads, OpBuilder &b,
                            CallGradients callGradients) {
  for (Operation *op : llvm::reverse(ops)) {
    SmallVector<Value> resultGrads;
    bool any = false;
    for (Value r : op->getResults()) {
      resultGrads.push_back(grads.lookup(r));
      any |= bool(resultGrads.back());
    }
    if (!any || isa<ParamOp>(op))
      continue;
    if (llvm::none_of(op->getOperands(),
                      [&](Value v) { return active.contains(v); }))
      continue;
    SmallVector<Value> operandGrads;
    if (auto call = dyn_cast<func::CallOp>(op)) {
      if (failed(callGradients(call, resultGrads, operandGrads, b)))
        return failure();
    } else {
      auto differentiable = dyn_cast<GradientOpInterface>(op);
      if (!differentiable)
        return op->emitError() << "'" << op->getName()
                               << "' has no gradient yet, and the loss depends "
                                  "on a parameter through it";
      if (failed(differentiable.buildGradients(b, resultGrads, operandGrads)))
        return failure();
    }
    for (auto [operand, g] : llvm::zip(op->getOperands(), operandGrads)) {
      if (!g || !active.contains(operand))
        continue;
      Value &acc = grads[operand];
      acc = acc ? Value(AddOp::create(b, op->getLoc(), acc, g)) : g;
    }
  }
  return success();
}

} // namespace sinter::graph
