//===- NarrowCallBoundaries.cpp - Calls pass what the other side reads ----===//
//
// A layer's backward function is given the activations its forward function
// saved, and may read one only through copies that move or round it: the
// query, key and value are sliced from the saved f32 projection, transposed
// and rounded to bf16 for the attention call, as the forward pass did
// already. Moving such a chain of copies into the callers, then into the
// function that returned the value, makes the forward function return what
// the backward one reads (half the bytes, in bf16), and CSE there merges
// the chain with the forward pass's own copies: the backward pass neither
// makes them again nor reads the f32 value.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/KnownCalls.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_NARROWCALLBOUNDARIES
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// Operands a chain's op may take besides the value it copies: a static
/// tensor.empty (an init) or a constant. They are cloned with the chain.
bool isFree(Value v) {
  Operation *def = v.getDefiningOp();
  if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(def))
    return empty.getDynamicSizes().empty();
  return isa_and_nonnull<arith::ConstantOp>(def);
}

/// A generic that only moves or rounds its one input: parallel loops, the
/// input read through a permutation, a free init it does not read, and a
/// body of float casts.
bool movesOrRounds(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0 ||
      !isFree(op.getDpsInits()[0]) ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return false;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isPermutation())
      return false;
  Region *body = &op.getRegion();
  return llvm::all_of(op.getBody()->getOperations(), [&](Operation &inner) {
    return isa<arith::TruncFOp, arith::ExtFOp, linalg::YieldOp>(inner) &&
           llvm::all_of(inner.getOperands(),
                        [&](Value v) { return v.getParentRegion() == body; });
  });
}

/// The value `op` copies when it is a link of a chain (a static view or
/// reshape, a transpose, a moving or rounding generic), else null.
Value copiedValue(Operation *op) {
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return slice.getOffsets().empty() && slice.getSizes().empty() &&
                   slice.getStrides().empty()
               ? slice.getSource()
               : Value();
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return expand.getOutputShape().empty() ? expand.getSrc() : Value();
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return collapse.getSrc();
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return transpose.hasPureTensorSemantics() && isFree(transpose.getInit())
               ? transpose.getInput()
               : Value();
  if (auto generic = dyn_cast<linalg::GenericOp>(op))
    return movesOrRounds(generic) ? generic.getDpsInputs()[0] : Value();
  return {};
}

bool isLoop(Operation *op) { return isa<linalg::TransposeOp, linalg::GenericOp>(op); }

/// A value written whole by a loop, maybe reshaped: one that can cross a
/// call as a dense buffer, without a copy.
bool isDense(Value v) {
  Operation *def = v.getDefiningOp();
  if (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
    return isDense(def->getOperand(0));
  return def && isLoop(def);
}

/// A tensor of static shape with a sized element (an int or a float).
bool isStaticTensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getElementType().isIntOrFloat();
}

int64_t bytesOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getNumElements() * llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

/// The copies made of `root` in its block, in order, and the values of
/// them read elsewhere (the frontier), in order.
struct Chain {
  SmallVector<Operation *> ops;
  SmallVector<Value> frontier;
};

/// The chain of copies of `root`, when every use of `root` is in it, its
/// frontier is dense and no larger than `root`, and it holds a loop to
/// save. Users outside `root`'s block end the chain.
std::optional<Chain> chainOf(Value root) {
  if (!isStaticTensor(root))
    return std::nullopt;
  Block *block = root.getParentBlock();
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> work{root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : v.getUsers())
      if (user->getBlock() == block && !ops.contains(user) && copiedValue(user) == v) {
        ops.insert(user);
        work.push_back(user->getResult(0));
      }
  }
  auto isChain = [&](OpOperand &use) { return ops.contains(use.getOwner()); };
  if (ops.empty() || !llvm::all_of(root.getUses(), isChain) || !llvm::any_of(ops, isLoop))
    return std::nullopt;
  Chain chain;
  chain.ops.assign(ops.begin(), ops.end());
  llvm::sort(chain.ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  int64_t bytes = 0;
  for (Operation *op : chain.ops) {
    Value v = op->getResult(0);
    if (llvm::all_of(v.getUses(), isChain))
      continue;
    if (!isDense(v) || !isStaticTensor(v))
      return std::nullopt;
    chain.frontier.push_back(v);
    bytes += bytesOf(v);
  }
  if (bytes > bytesOf(root))
    return std::nullopt;
  return chain;
}

/// The rounding `v` is read through, as a chain of one link: a loop that
/// rounds it element by element is its only reader. Such a rounding can be
/// made where the value is, when the loop that writes it can write it
/// rounded (the residual stream's gradient, rounded by the layer that reads
/// it, is then written in bf16 by the layer that makes it).
std::optional<Chain> roundingOf(Value v) {
  if (!isStaticTensor(v) || !v.hasOneUse())
    return std::nullopt;
  auto loop = dyn_cast<linalg::GenericOp>(*v.getUsers().begin());
  if (!loop || copiedValue(loop) != v ||
      !llvm::all_of(loop.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }) ||
      !llvm::any_of(loop.getBody()->getOperations(), llvm::IsaPred<arith::TruncFOp>) ||
      bytesOf(loop->getResult(0)) > bytesOf(v))
    return std::nullopt;
  return Chain{{loop}, {loop->getResult(0)}};
}

using ChainFinder = std::optional<Chain> (*)(Value);

/// Whether `v` is the only result of an all-parallel loop in `block` that
/// only `reader` reads: a rounding placed between them fuses into the loop
/// (sinter-fuse-elementwise), which then writes the rounded value.
bool roundsInItsLoop(Value v, Operation *reader, Block *block) {
  auto loop = v.getDefiningOp<linalg::GenericOp>();
  return loop && loop->getBlock() == block && loop->getNumResults() == 1 &&
         loop.getNumLoops() == loop.getNumParallelLoops() && v.hasOneUse() &&
         *v.getUsers().begin() == reader;
}

/// Whether a rounding of `f`'s result `i` can be made in `f` and fuse
/// there (see narrowResult).
bool roundsBeforeReturn(func::FuncOp f, unsigned i) {
  if (!f.getBody().hasOneBlock())
    return false;
  auto ret = cast<func::ReturnOp>(f.front().getTerminator());
  return roundsInItsLoop(ret.getOperand(i), ret, &f.front());
}

/// `chain` made again from `root` at `b`'s point; its frontier's copies.
SmallVector<Value> cloneChain(OpBuilder &b, const Chain &chain, Value chainRoot,
                              Value root) {
  IRMapping map;
  map.map(chainRoot, root);
  for (Operation *op : chain.ops) {
    for (Value operand : op->getOperands())
      if (!map.contains(operand) && isFree(operand))
        map.map(operand, b.clone(*operand.getDefiningOp())->getResult(0));
    b.clone(*op, map);
  }
  return llvm::map_to_vector(chain.frontier, [&](Value v) { return map.lookup(v); });
}

/// Replaces the frontier's reads by `values` and erases the chain.
void replaceChain(const Chain &chain, ValueRange values) {
  DenseSet<Operation *> ops(chain.ops.begin(), chain.ops.end());
  for (auto [v, by] : llvm::zip_equal(chain.frontier, values))
    Value(v).replaceUsesWithIf(
        by, [&](OpOperand &use) { return !ops.contains(use.getOwner()); });
  for (Operation *op : llvm::reverse(chain.ops))
    op->erase();
}

/// Whether two chains copy alike: the same ops in the same order, reading
/// each other's values at the same places, and free operands made alike.
bool sameChain(const Chain &a, Value rootA, const Chain &b, Value rootB) {
  if (a.ops.size() != b.ops.size() || a.frontier.size() != b.frontier.size())
    return false;
  IRMapping same;
  same.map(rootA, rootB);
  auto check = [&](Value x, Value y) -> LogicalResult {
    if (same.lookupOrNull(x) == y)
      return success();
    if (isFree(x) && isFree(y) &&
        OperationEquivalence::isEquivalentTo(x.getDefiningOp(), y.getDefiningOp(),
                                             OperationEquivalence::IgnoreLocations))
      return success();
    return failure();
  };
  auto mark = [&](Value x, Value y) { same.map(x, y); };
  for (auto [x, y] : llvm::zip_equal(a.ops, b.ops))
    if (!OperationEquivalence::isEquivalentTo(x, y, check, mark,
                                              OperationEquivalence::IgnoreLocations))
      return false;
  return llvm::all_of(llvm::zip_equal(a.frontier, b.frontier), [&](auto pair) {
    return same.lookupOrNull(std::get<0>(pair)) == std::get<1>(pair);
  });
}

using KnownCalls = llvm::MapVector<func::FuncOp, SmallVector<func::CallOp>>;

/// Whether operand `i` of `calls` can take the chain that argument `arg`
/// of their callee is read through without costing more there. Each call
/// passes the same result of calls to one known function, which (the next
/// step) then makes the chain, every call of that function's result being
/// read through this argument or the same chain already; or, for a
/// rounding, a loop of the caller that only this call reads, which fusion
/// then has write its output rounded. A rounding moves only where it
/// fuses: into such loops, and into a producer that returns a loop's
/// output.
bool madeForThisArgument(unsigned i, ArrayRef<func::CallOp> calls, const KnownCalls &known,
                         BlockArgument arg, const Chain &chain, ChainFinder finder) {
  StringRef producer;
  std::optional<unsigned> index;
  for (func::CallOp call : calls) {
    Value operand = call->getOperand(i);
    if (finder == roundingOf && roundsInItsLoop(operand, call, call->getBlock()))
      continue;
    auto result = dyn_cast<OpResult>(operand);
    auto made = result ? dyn_cast<func::CallOp>(result.getOwner()) : func::CallOp();
    if (!made || !result.hasOneUse() ||
        (index && (made.getCallee() != producer || result.getResultNumber() != *index)))
      return false;
    producer = made.getCallee();
    index = result.getResultNumber();
  }
  if (!index)
    return true;
  StringRef callee = func::CallOp(calls.front()).getCallee();
  auto readHere = [&](Value r) {
    if (!r.hasOneUse())
      return false;
    OpOperand &use = *r.getUses().begin();
    auto user = dyn_cast<func::CallOp>(use.getOwner());
    return user && user.getCallee() == callee && use.getOperandNumber() == i;
  };
  auto readThroughChain = [&](Value r) {
    std::optional<Chain> other = finder(r);
    return other && sameChain(chain, arg, *other, r);
  };
  for (auto &[function, producerCalls] : known) {
    func::FuncOp fn = function;
    if (fn.getSymName() != producer)
      continue;
    if (finder == roundingOf && !roundsBeforeReturn(fn, *index))
      return false;
    // narrowResult leaves calls with argument or result attributes alone.
    return llvm::all_of(producerCalls, [&](func::CallOp made) {
      Value r = made->getResult(*index);
      return !made.getArgAttrsAttr() && !made.getResAttrsAttr() &&
             (readHere(r) || readThroughChain(r));
    });
  }
  return false;
}

/// Argument `i` of `f`, read only through a chain, becomes the chain's
/// frontier, made by each caller from its operand, when the next step
/// moves it on into the function that made the operand.
bool narrowArgument(func::FuncOp f, unsigned i, MutableArrayRef<func::CallOp> calls,
                    const KnownCalls &known, ChainFinder finder) {
  BlockArgument arg = f.getArgument(i);
  std::optional<Chain> chain = finder(arg);
  if (!chain || !madeForThisArgument(i, calls, known, arg, *chain, finder))
    return false;
  for (func::CallOp call : calls) {
    OpBuilder b(call);
    SmallVector<Value> operands(call.getOperands());
    llvm::append_range(operands, cloneChain(b, *chain, arg, operands[i]));
    operands.erase(operands.begin() + i);
    call->setOperands(operands);
  }
  SmallVector<Value> args;
  for (Value v : chain->frontier) {
    (void)f.insertArgument(f.getNumArguments(), v.getType(), {}, v.getLoc());
    args.push_back(f.getArgument(f.getNumArguments() - 1));
  }
  replaceChain(*chain, args);
  (void)f.eraseArgument(i);
  return true;
}

/// Result `i` of `f`, which every caller reads only through the same
/// chain, becomes the chain's frontier, made in `f` before it returns.
bool narrowResult(func::FuncOp f, unsigned i, MutableArrayRef<func::CallOp> calls,
                  ChainFinder finder) {
  // Calls with argument or result attributes, which would need the same
  // change, are left alone.
  if (!f.getBody().hasOneBlock() || llvm::any_of(calls, [](func::CallOp call) {
        return call.getArgAttrsAttr() || call.getResAttrsAttr();
      }))
    return false;
  // A rounding moves in only where it fuses into the loop that made the
  // value (a chain's frontier is dense by itself).
  if (finder == roundingOf && !roundsBeforeReturn(f, i))
    return false;
  SmallVector<Chain> chains;
  for (func::CallOp call : calls) {
    std::optional<Chain> chain = finder(call.getResult(i));
    if (!chain ||
        (!chains.empty() && !sameChain(chains.front(), calls.front().getResult(i), *chain,
                                       call.getResult(i))))
      return false;
    chains.push_back(std::move(*chain));
  }
  auto ret = cast<func::ReturnOp>(f.front().getTerminator());
  OpBuilder b(ret);
  SmallVector<Value> copies =
      cloneChain(b, chains.front(), calls.front().getResult(i), ret.getOperand(i));
  SmallVector<Value> returned(ret.getOperands());
  llvm::append_range(returned, copies);
  returned.erase(returned.begin() + i);
  ret->setOperands(returned);
  for (Value v : copies)
    (void)f.insertResult(f.getNumResults(), v.getType(), {});
  (void)f.eraseResult(i);
  for (auto [call, chain] : llvm::zip_equal(calls, chains)) {
    func::CallOp made = remadeCall(call, f, call.getOperands());
    unsigned kept = call.getNumResults() - 1;
    replaceChain(chain, made.getResults().drop_front(kept));
    for (unsigned r = 0, n = 0; r < call.getNumResults(); ++r)
      if (r != i)
        call.getResult(r).replaceAllUsesWith(made.getResult(n++));
    call->erase();
  }
  return true;
}

/// A moved rounding of a loop's output that the loop also writes rounded
/// (a bias added, kept in f32 and rounded for the matmul that reads it) is
/// that rounded output, which CSE cannot see: `rounding` then goes.
void reuseRoundedOutput(linalg::GenericOp rounding) {
  if (rounding.getNumDpsInputs() != 1 || rounding.getNumResults() != 1 ||
      !llvm::all_of(rounding.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return;
  auto yield = cast<linalg::YieldOp>(rounding.getBody()->getTerminator());
  auto trunc = yield.getOperand(0).getDefiningOp<arith::TruncFOp>();
  if (!trunc || trunc.getIn() != rounding.getBody()->getArgument(0) ||
      rounding.getBody()->getOperations().size() != 2)
    return;
  auto input = dyn_cast<OpResult>(rounding.getDpsInputs()[0]);
  auto producer = input ? dyn_cast<linalg::GenericOp>(input.getOwner()) : nullptr;
  if (!producer)
    return;
  auto produced = cast<linalg::YieldOp>(producer.getBody()->getTerminator());
  unsigned k = input.getResultNumber();
  Value wide = produced.getOperand(k);
  for (unsigned j = 0; j < producer.getNumResults(); ++j) {
    auto rounded = produced.getOperand(j).getDefiningOp<arith::TruncFOp>();
    if (j == k || !rounded || rounded.getIn() != wide ||
        rounded.getType() != trunc.getType() ||
        producer.getResult(j).getType() != rounding.getResult(0).getType() ||
        producer.getIndexingMapMatchingResult(producer->getResult(j)) !=
            producer.getIndexingMapMatchingResult(input))
      continue;
    rounding.getResult(0).replaceAllUsesWith(producer.getResult(j));
    rounding->erase();
    return;
  }
}

struct NarrowCallBoundaries : impl::NarrowCallBoundariesBase<NarrowCallBoundaries> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A chain only moves toward the function that made its value, so few
    // rounds suffice; the bound keeps a surprise from looping.
    bool changed = true;
    for (int round = 0; changed && round < 8; ++round) {
      changed = false;
      KnownCalls known = knownCalls(module);
      for (auto &[f, calls] : known)
        for (unsigned i = f.getNumArguments(); i-- > 0;)
          changed |= narrowArgument(f, i, calls, known, chainOf) ||
                      narrowArgument(f, i, calls, known, roundingOf);
      for (auto &[f, calls] : knownCalls(module))
        for (unsigned i = f.getNumResults(); i-- > 0;) {
          if (narrowResult(f, i, calls, chainOf) || narrowResult(f, i, calls, roundingOf)) {
            changed = true;
            calls = knownCalls(module)[f];
          }
        }
    }
    SmallVector<linalg::GenericOp> loops;
    module.walk([&](linalg::GenericOp op) { loops.push_back(op); });
    for (linalg::GenericOp op : loops)
      reuseRoundedOutput(op);
  }
};

} // namespace
} // namespace sinter
