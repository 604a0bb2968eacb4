//===- ResultsOnce.cpp - A function returns each value once ---------------===//
//
// Passes that narrow values across calls can leave a layer's forward
// function returning one tensor twice, or once and once reshaped
// (attention's output, for its own gradient as [B, T, C] and for the output
// projection's weight gradient as [B*T, C]). After bufferization each
// result is a buffer of its own, so the second would be a copy. On tensors,
// before bufferization, the callers make the second from the first.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/KnownCalls.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/BitVector.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_RESULTSONCE
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// How a dropped result is made from a kept one: the kept result's index
/// and the static reshape applied to it (null: the same value).
struct Remade {
  unsigned dropped, from;
  Operation *reshape;
};

/// The results of `ret` that equal an earlier result, or are a static
/// reshape of a result that is kept.
SmallVector<Remade> remadeResults(func::ReturnOp ret) {
  SmallVector<Remade> remade;
  unsigned n = ret.getNumOperands();
  llvm::BitVector dropped(n);
  auto keptIndexOf = [&](Value v, unsigned except) -> std::optional<unsigned> {
    for (unsigned j = 0; j < n; ++j)
      if (j != except && !dropped[j] && ret.getOperand(j) == v)
        return j;
    return std::nullopt;
  };
  for (unsigned i = 0; i < n; ++i) {
    Value v = ret.getOperand(i);
    if (std::optional<unsigned> j = keptIndexOf(v, i); j && *j < i) {
      dropped.set(i);
      remade.push_back({i, *j, nullptr});
    }
  }
  for (unsigned i = 0; i < n; ++i) {
    Operation *reshape = ret.getOperand(i).getDefiningOp();
    if (dropped[i] || !isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(reshape) ||
        reshape->getNumOperands() != 1)
      continue;
    // A source that is itself a reshape the callers would make stays.
    std::optional<unsigned> j = keptIndexOf(reshape->getOperand(0), i);
    if (!j || llvm::any_of(remade, [&](const Remade &r) { return r.dropped == *j; }))
      continue;
    dropped.set(i);
    remade.push_back({i, *j, reshape});
  }
  // A result others are made from is never dropped itself.
  llvm::erase_if(remade, [&](const Remade &r) {
    return llvm::any_of(remade, [&](const Remade &o) { return o.from == r.dropped; });
  });
  return remade;
}

void returnOnce(func::FuncOp f, ArrayRef<func::CallOp> calls) {
  if (!f.getBody().hasOneBlock() || llvm::any_of(calls, [](func::CallOp call) {
        return call.getArgAttrsAttr() || call.getResAttrsAttr();
      }))
    return;
  auto ret = cast<func::ReturnOp>(f.front().getTerminator());
  SmallVector<Remade> remade = remadeResults(ret);
  if (remade.empty())
    return;
  unsigned n = ret.getNumOperands();
  llvm::BitVector dropped(n);
  for (const Remade &r : remade)
    dropped.set(r.dropped);
  SmallVector<unsigned> position(n);
  SmallVector<Value> kept;
  for (unsigned i = 0; i < n; ++i)
    if (!dropped[i]) {
      position[i] = kept.size();
      kept.push_back(ret.getOperand(i));
    }
  ret->setOperands(kept);
  (void)f.eraseResults(dropped);
  for (func::CallOp call : calls) {
    func::CallOp made = remadeCall(call, f, call.getOperands());
    OpBuilder b(call);
    for (unsigned i = 0; i < n; ++i)
      if (!dropped[i])
        call.getResult(i).replaceAllUsesWith(made.getResult(position[i]));
    for (const Remade &r : remade) {
      Value from = made.getResult(position[r.from]);
      if (r.reshape) {
        IRMapping mapping;
        mapping.map(r.reshape->getOperand(0), from);
        from = b.clone(*r.reshape, mapping)->getResult(0);
      }
      call.getResult(r.dropped).replaceAllUsesWith(from);
    }
    call->erase();
  }
}

struct ResultsOnce : impl::ResultsOnceBase<ResultsOnce> {
  void runOnOperation() override {
    for (auto &[f, calls] : knownCalls(getOperation()))
      returnOnce(f, calls);
  }
};

} // namespace
} // namespace sinter
