//===- RowReductionsAcrossCalls.cpp - Statistics made where the rows are --===//
//
// A GPT-2 layer's first layer norm sums each row of the layer's input, an
// argument, and the previous layer wrote that input as its last loop (the
// residual add) just before returning it. Read back in the next call, the
// input costs a pass of its own. Here a row reduction of an argument alone
// moves into the callers, which give its results to the call, and a row
// reduction that every caller makes of a function's result moves into the
// function, which returns its results: the statistics of the layer's output
// are then made in the layer, next to the loop that wrote the rows, and
// sinter-cuda-fuse-into-row-reductions makes the two one pass. The first
// layer's statistics land next to the embedding that made its input, the
// last layer's merge with the final layer norm's own.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/KnownCalls.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_ROWREDUCTIONSACROSSCALLS
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// A fill of a constant into a static tensor.empty: an init that can be
/// made again anywhere.
linalg::FillOp freeFill(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.hasPureTensorSemantics() ||
      !fill.getInputs()[0].getDefiningOp<arith::ConstantOp>())
    return {};
  auto empty = fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
  return empty && empty.getDynamicSizes().empty() ? fill : linalg::FillOp();
}

/// The constants from outside its body that `op`'s body reads, if it reads
/// nothing else from outside (it can then be made again elsewhere).
std::optional<llvm::SetVector<Value>> constantsReadBy(linalg::GenericOp op) {
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(op.getRegion(), above);
  for (Value v : above)
    if (!v.getDefiningOp<arith::ConstantOp>())
      return std::nullopt;
  return above;
}

/// Whether `op` reduces the rows of `v` alone: its one input, read through
/// a permutation whose last index is a reduced loop (along rows, not down
/// columns), static shapes, parallel loops first and then the reduced
/// ones, inits that are free fills, and a body that reads from outside it
/// only constants.
bool reducesRowsOf(linalg::GenericOp op, Value v) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getDpsInputs()[0] != v || op.getNumReductionLoops() == 0 ||
      !cast<RankedTensorType>(v.getType()).hasStaticShape() || !constantsReadBy(op))
    return false;
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (!map.isPermutation() || map.getNumResults() == 0 ||
      iterators[cast<AffineDimExpr>(map.getResults().back()).getPosition()] !=
          utils::IteratorType::reduction)
    return false;
  bool reduced = false;
  for (utils::IteratorType it : iterators) {
    if (it == utils::IteratorType::parallel && reduced)
      return false;
    reduced |= it == utils::IteratorType::reduction;
  }
  return llvm::all_of(op.getDpsInits(), [](Value init) { return freeFill(init); });
}

/// The row reductions of `v` alone in `block`, in order.
SmallVector<linalg::GenericOp> rowReductionsOf(Value v, Block *block) {
  SmallVector<linalg::GenericOp> found;
  for (Operation *user : v.getUsers())
    if (auto op = dyn_cast<linalg::GenericOp>(user); op && op->getBlock() == block &&
                                                     reducesRowsOf(op, v) &&
                                                     !llvm::is_contained(found, op))
      found.push_back(op);
  llvm::sort(found, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return found;
}

/// `op`, its inits' fills and the constants its body reads, made again at
/// `b`'s point, reading `input`.
SmallVector<Value> cloneReduction(OpBuilder &b, linalg::GenericOp op, Value input) {
  IRMapping map;
  map.map(op.getDpsInputs()[0], input);
  std::optional<llvm::SetVector<Value>> constants = constantsReadBy(op);
  for (Value constant : *constants)
    map.map(constant, b.clone(*constant.getDefiningOp())->getResult(0));
  for (Value init : op.getDpsInits()) {
    if (map.contains(init))
      continue;
    linalg::FillOp fill = freeFill(init);
    for (Value operand : fill->getOperands())
      if (!map.contains(operand))
        map.map(operand, b.clone(*operand.getDefiningOp())->getResult(0));
    b.clone(*fill, map);
  }
  ValueRange results = b.clone(*op, map)->getResults();
  return SmallVector<Value>(results.begin(), results.end());
}

/// Whether ops `a` and `b` compute alike, given values already known alike
/// in `same` (which learns theirs): the same op on alike operands, an
/// operand made alike outside them by pure ops counting as alike (a fill of
/// a constant into a tensor.empty).
bool computeAlike(Operation *a, Operation *b, IRMapping &same) {
  std::function<LogicalResult(Value, Value)> check = [&](Value x, Value y) {
    if (x == y || same.lookupOrNull(x) == y)
      return success();
    Operation *dx = x.getDefiningOp(), *dy = y.getDefiningOp();
    return success(dx && dy && dx != a && isPure(dx) && isPure(dy) &&
                   computeAlike(dx, dy, same));
  };
  return OperationEquivalence::isEquivalentTo(
      a, b, check, [&](Value x, Value y) { same.map(x, y); },
      OperationEquivalence::IgnoreLocations);
}

/// Whether reductions `a` of `x` and `b` of `y` compute alike.
bool sameReduction(linalg::GenericOp a, Value x, linalg::GenericOp b, Value y) {
  IRMapping same;
  same.map(x, y);
  return computeAlike(a, b, same);
}

/// Erases `op`, and the fills of its inits (with their constants and
/// tensor.empty) that nothing else reads.
void eraseWithFills(linalg::GenericOp op) {
  llvm::SetVector<Operation *> made;
  for (Value init : op.getDpsInits())
    made.insert(init.getDefiningOp());
  op.erase();
  for (size_t i = 0; i < made.size(); ++i) {
    Operation *def = made[i];
    if (!def->use_empty())
      continue;
    for (Value operand : def->getOperands())
      if (Operation *maker = operand.getDefiningOp())
        made.insert(maker);
    def->erase();
  }
}

/// Whether a row reduction next to where `v` is made would be worth it: a
/// loop wrote `v` (the reduction can join it), or a call returned it (the
/// reduction can move on into the function).
bool madeByLoopOrCall(Value v) {
  return isa_and_nonnull<linalg::GenericOp, func::CallOp>(v.getDefiningOp());
}

/// Whether any of `calls` has argument or result attributes, which a change
/// of the function's signature would have to change too (they are left
/// alone).
bool haveCallAttributes(ArrayRef<func::CallOp> calls) {
  return llvm::any_of(
      calls, [](func::CallOp c) { return c.getArgAttrsAttr() || c.getResAttrsAttr(); });
}

/// Moves a row reduction of an argument of `f` into its callers, which pass
/// its results as new arguments. Whether one moved.
bool hoistArgumentReduction(func::FuncOp f, MutableArrayRef<func::CallOp> calls) {
  if (!f.getBody().hasOneBlock() || haveCallAttributes(calls))
    return false;
  for (BlockArgument arg : f.getArguments()) {
    SmallVector<linalg::GenericOp> reductions = rowReductionsOf(arg, &f.front());
    if (reductions.empty() || !llvm::all_of(calls, [&](func::CallOp call) {
          return madeByLoopOrCall(call.getOperand(arg.getArgNumber()));
        }))
      continue;
    linalg::GenericOp reduction = reductions.front();
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      SmallVector<Value> operands(call.getOperands());
      llvm::append_range(operands,
                         cloneReduction(b, reduction, operands[arg.getArgNumber()]));
      call->setOperands(operands);
    }
    for (Value result : reduction.getResults()) {
      (void)f.insertArgument(f.getNumArguments(), result.getType(), {}, result.getLoc());
      result.replaceAllUsesWith(f.getArgument(f.getNumArguments() - 1));
    }
    eraseWithFills(reduction);
    return true;
  }
  return false;
}

/// Moves a row reduction that every caller makes of one result of `f` (the
/// same one at every call) into `f`, which returns its results. Whether one
/// moved; `calls` are then the new calls.
bool sinkResultReduction(func::FuncOp f, SmallVectorImpl<func::CallOp> &calls) {
  if (!f.getBody().hasOneBlock() || calls.empty() || haveCallAttributes(calls))
    return false;
  auto ret = cast<func::ReturnOp>(f.front().getTerminator());
  for (unsigned i = 0; i < f.getNumResults(); ++i) {
    Value returned = ret.getOperand(i);
    if (!isa_and_nonnull<linalg::GenericOp>(returned.getDefiningOp()))
      continue;
    func::CallOp first = calls.front();
    SmallVector<linalg::GenericOp> candidates =
        rowReductionsOf(first.getResult(i), first->getBlock());
    if (candidates.empty())
      continue;
    linalg::GenericOp like = candidates.front();
    // Each call's reductions of result i that compute as `like` does.
    SmallVector<SmallVector<linalg::GenericOp>> perCall;
    for (func::CallOp call : calls) {
      SmallVector<linalg::GenericOp> same;
      for (linalg::GenericOp r : rowReductionsOf(call.getResult(i), call->getBlock()))
        if (sameReduction(like, first.getResult(i), r, call.getResult(i)))
          same.push_back(r);
      if (same.empty())
        break;
      perCall.push_back(std::move(same));
    }
    if (perCall.size() != calls.size())
      continue;

    OpBuilder b(ret);
    SmallVector<Value> made = cloneReduction(b, like, returned);
    SmallVector<Value> results(ret.getOperands());
    llvm::append_range(results, made);
    ret->setOperands(results);
    for (Value v : made)
      (void)f.insertResult(f.getNumResults(), v.getType(), {});
    for (auto [call, reductions] : llvm::zip_equal(calls, perCall)) {
      func::CallOp next = remadeCall(call, f, call.getOperands());
      unsigned old = call.getNumResults();
      for (linalg::GenericOp r : reductions) {
        for (auto [j, v] : llvm::enumerate(r.getResults()))
          v.replaceAllUsesWith(next.getResult(old + j));
        eraseWithFills(r);
      }
      call.replaceAllUsesWith(next.getResults().take_front(old));
      call->erase();
      call = next;
    }
    return true;
  }
  return false;
}

struct RowReductionsAcrossCalls
    : impl::RowReductionsAcrossCallsBase<RowReductionsAcrossCalls> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A reduction moves from a callee to its callers, then on into the
    // function that made its rows, which keeps it; a bound keeps a surprise
    // from looping.
    bool changed = true;
    for (int round = 0; changed && round < 16; ++round) {
      changed = false;
      for (auto &[f, calls] : knownCalls(module))
        while (hoistArgumentReduction(f, calls))
          changed = true;
      for (auto &[f, calls] : knownCalls(module))
        while (sinkResultReduction(f, calls))
          changed = true;
    }
  }
};

} // namespace
} // namespace sinter
