//===- BlockDerivative.cpp - A repeated block's forward and backward pair -===//
//
// The block is cloned with one more argument per seeded result, and
// differentiated in the clone by the same reverse sweep as the model. The
// clone is then cut in two: the forward function keeps what computes the
// block's results, the backward function what computes the gradients, and
// every value of the first that the second reads crosses as a saved
// activation, unless it is cheap to compute again.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/Transforms/BlockDerivative.h"

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/Transforms/Backpropagate.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace sinter::graph {
namespace {

/// Data movement: its operands are saved anyway.
bool movesData(Operation *op) {
  return isa<ConstantOp, ReshapeOp, TransposeOp, SliceOp>(op);
}

/// Elementwise arithmetic cheaper than a round trip through memory.
bool isCheapArithmetic(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, NegOp, ReluOp, MaximumOp, MinimumOp>(op);
}

/// Whether saving `op`'s operands instead of its result keeps no more
/// memory: of the operands as large as the result, at most one is not an
/// argument of the block (which its caller holds). Broadcast operands (a
/// batch-norm's per-channel scale, a bias) are small.
bool savesNoMore(Operation *op) {
  int64_t size = cast<ShapedType>(op->getResult(0).getType()).getNumElements();
  int large = 0;
  for (Value v : op->getOperands())
    if (!isa<BlockArgument>(v) && cast<ShapedType>(v.getType()).getNumElements() >= size)
      ++large;
  return large <= 1;
}

/// A bias added to a matmul's product that nothing else reads: the matmul
/// call adds it as it writes the product (sinter-matmul-bias), so the sum
/// is what is written.
bool isBiasOfProduct(Operation *op) {
  if (!isa<AddOp>(op))
    return false;
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (v.hasOneUse() && isa_and_nonnull<MatmulOp, MatmulTransposedOp>(v.getDefiningOp()))
      return cast<ShapedType>(op->getOperand(1 - i).getType()).getRank() == 1;
  return false;
}

/// Whether the forward pass fuses `op` into its users there, so that its
/// result is never written to memory unless saved. A result of the block,
/// one that a convolution or matmul reads, or a matmul's product plus its
/// bias, is written anyway: saving it costs memory only, while computing it
/// again would write it a second time.
bool fusesIntoForwardUsers(Operation *op, const DenseSet<Operation *> &forwardOps,
                           ArrayRef<Value> results) {
  if (llvm::is_contained(results, op->getResult(0)) || isBiasOfProduct(op))
    return false;
  for (Operation *user : op->getUsers())
    if (forwardOps.contains(user) && !isCheapArithmetic(user) && !movesData(user))
      return false;
  return true;
}

/// Ops whose outputs the selective policy keeps: the ones that cost
/// compute rather than memory traffic.
bool isExpensive(Operation *op) {
  return isa<MatmulOp, MatmulTransposedOp, Conv2dOp, AttentionOp, AttentionQkvOp>(op);
}

/// Whether the backward function computes `value` again instead of saving
/// it. Data movement is always recomputed. By default, so is cheap
/// arithmetic that saves no memory: for a batch-norm before a ReLU, the
/// backward pass then reads the convolution's output and the ReLU's, not
/// also the normalized copy (ResNet-18, batch 32: 488 -> 372 MiB at the
/// peak). Asked to recompute more, the block's results (which the caller
/// holds anyway) and collectives (which every rank would have to run
/// again) are still kept.
bool isRecomputed(Value value, const DenseSet<Operation *> &forwardOps,
                  ArrayRef<Value> results, Recompute policy) {
  Operation *op = value.getDefiningOp();
  if (movesData(op))
    return true;
  if (policy == Recompute::Cheap)
    return isCheapArithmetic(op) && savesNoMore(op) &&
           fusesIntoForwardUsers(op, forwardOps, results);
  if (llvm::is_contained(results, value) || isa<AllReduceSumOp>(op))
    return false;
  return policy == Recompute::Full || !isExpensive(op);
}

/// `block`'s clone with the seeds as extra arguments and its gradients
/// built before the return.
struct Differentiated {
  func::FuncOp function;
  SmallVector<Value> results;  ///< the block's results, in the clone
  SmallVector<Value> seeds;    ///< arguments: gradients of seeded results
  SmallVector<Value> argGrads; ///< per differentiated argument, maybe null
};

FailureOr<Differentiated> buildGradients(func::FuncOp block,
                                         ArrayRef<unsigned> seeded,
                                         ArrayRef<unsigned> differentiated) {
  Differentiated d;
  d.function = block.clone();
  Block &body = d.function.getBody().front();
  Operation *ret = body.getTerminator();
  d.results.assign(ret->operand_begin(), ret->operand_end());
  for (unsigned j : seeded)
    d.seeds.push_back(body.addArgument(d.results[j].getType(), block.getLoc()));

  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  SmallVector<Value> roots;
  for (unsigned a : differentiated)
    roots.push_back(body.getArgument(a));
  Dependences deps(block->getParentOfType<ModuleOp>());
  DenseSet<Value> active = activeValues(ops, roots, deps);

  OpBuilder b(ret);
  DenseMap<Value, Value> grads;
  for (auto [j, seed] : llvm::zip(seeded, d.seeds)) {
    Value r = d.results[j];
    if (!active.contains(r))
      continue;
    Value &acc = grads[r];
    acc = acc ? Value(AddOp::create(b, r.getLoc(), acc, seed)) : seed;
  }
  auto noCalls = [](func::CallOp call, ArrayRef<Value>, SmallVectorImpl<Value> &,
                    OpBuilder &) -> LogicalResult {
    return call.emitError("internal error: a call inside a repeated block");
  };
  if (failed(backpropagate(ops, active, grads, b, noCalls))) {
    d.function.erase();
    return failure();
  }
  for (unsigned a : differentiated)
    d.argGrads.push_back(grads.lookup(body.getArgument(a)));
  return d;
}

/// The ops a value set needs, within `body`: its backward slice.
DenseSet<Operation *> sliceOf(ArrayRef<Value> values) {
  DenseSet<Operation *> ops;
  SmallVector<Value> worklist(values.begin(), values.end());
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (def && ops.insert(def).second)
      worklist.append(def->operand_begin(), def->operand_end());
  }
  return ops;
}

func::FuncOp newFunction(OpBuilder &b, func::FuncOp block, StringRef suffix,
                         TypeRange inputs, TypeRange results,
                         SymbolTable &symbols) {
  auto f = func::FuncOp::create(b, block.getLoc(),
                                (block.getName() + suffix).str(),
                                b.getFunctionType(inputs, results));
  f.setPrivate();
  if (auto name = attrs::block.get(block))
    attrs::block.set(f, name);
  symbols.insert(f);
  f.addEntryBlock();
  return f;
}

} // namespace

/// The block's `sinter.recompute`, Cheap when it has none.
static FailureOr<Recompute> recomputePolicy(func::FuncOp block) {
  StringAttr asked = attrs::recompute.get(block);
  if (!asked)
    return Recompute::Cheap;
  if (asked.getValue() == "selective")
    return Recompute::Selective;
  if (asked.getValue() == "full")
    return Recompute::Full;
  return block.emitError("sinter.recompute is \"")
         << asked.getValue() << "\"; expected \"selective\" or \"full\"";
}

FailureOr<BlockDerivative> differentiateBlock(func::FuncOp block,
                                              ArrayRef<unsigned> seeded,
                                              ArrayRef<unsigned> differentiated,
                                              SymbolTable &symbols) {
  FailureOr<Recompute> policy = recomputePolicy(block);
  if (failed(policy))
    return failure();
  FailureOr<Differentiated> d = buildGradients(block, seeded, differentiated);
  if (failed(d))
    return failure();
  Block &body = d->function.getBody().front();
  unsigned numArgs = block.getNumArguments();

  // What the backward function computes, and what it reads from the
  // forward: arguments, or values of ops that compute the results.
  DenseSet<Operation *> forwardOps = sliceOf(d->results);
  DenseSet<Operation *> backwardOps;
  llvm::SetVector<unsigned> savedArgs;
  llvm::SetVector<Value> savedValues;
  SmallVector<Value> worklist;
  for (Value g : d->argGrads)
    if (g)
      worklist.push_back(g);
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getArgNumber() < numArgs)
        savedArgs.insert(arg.getArgNumber());
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (forwardOps.contains(def) &&
        !isRecomputed(v, forwardOps, d->results, *policy)) {
      savedValues.insert(v);
      continue;
    }
    if (backwardOps.insert(def).second)
      worklist.append(def->operand_begin(), def->operand_end());
  }

  DenseMap<Operation *, unsigned> position;
  unsigned next = 0;
  for (Operation &op : body)
    position[&op] = next++;
  SmallVector<Value> saved(savedValues.begin(), savedValues.end());
  llvm::sort(saved, [&](Value x, Value y) {
    unsigned px = position[x.getDefiningOp()], py = position[y.getDefiningOp()];
    if (px != py)
      return px < py;
    return cast<OpResult>(x).getResultNumber() < cast<OpResult>(y).getResultNumber();
  });
  SmallVector<unsigned> args(savedArgs.begin(), savedArgs.end());
  llvm::sort(args);

  BlockDerivative result;
  result.seeded.assign(seeded.begin(), seeded.end());
  result.differentiated.assign(differentiated.begin(), differentiated.end());
  SmallVector<Value> residuals; // saved values that are not results
  for (unsigned a : args)
    result.saved.push_back({true, a});
  for (Value v : saved) {
    auto at = llvm::find(d->results, v);
    if (at != d->results.end()) {
      result.saved.push_back({false, unsigned(at - d->results.begin())});
      continue;
    }
    result.saved.push_back({false, unsigned(d->results.size() + residuals.size())});
    residuals.push_back(v);
  }

  OpBuilder b(block->getContext());
  b.setInsertionPointAfter(block);

  // @F.fwd: the block's ops that compute its results, returning the saved
  // activations too.
  SmallVector<Type> forwardTypes(TypeRange(ValueRange(d->results)));
  for (Value v : residuals)
    forwardTypes.push_back(v.getType());
  result.forward = newFunction(b, block, ".fwd", block.getArgumentTypes(),
                               forwardTypes, symbols);
  {
    Block *entry = &result.forward.getBody().front();
    OpBuilder fb = OpBuilder::atBlockEnd(entry);
    IRMapping map;
    for (unsigned i = 0; i < numArgs; ++i)
      map.map(body.getArgument(i), entry->getArgument(i));
    for (Operation &op : body.without_terminator())
      if (forwardOps.contains(&op))
        fb.clone(op, map);
    SmallVector<Value> returned;
    for (Value v : d->results)
      returned.push_back(map.lookup(v));
    for (Value v : residuals)
      returned.push_back(map.lookup(v));
    func::ReturnOp::create(fb, block.getLoc(), returned);
  }

  // @F.bwd: from the saved values and the seeds to the gradients.
  SmallVector<Value> backwardInputs;
  for (unsigned a : args)
    backwardInputs.push_back(body.getArgument(a));
  backwardInputs.append(saved.begin(), saved.end());
  backwardInputs.append(d->seeds.begin(), d->seeds.end());
  SmallVector<Type> gradTypes;
  for (unsigned a : differentiated)
    gradTypes.push_back(block.getArgumentTypes()[a]);
  result.backward =
      newFunction(b, block, ".bwd", TypeRange(ValueRange(backwardInputs)),
                  gradTypes, symbols);
  {
    Block *entry = &result.backward.getBody().front();
    OpBuilder bb = OpBuilder::atBlockEnd(entry);
    IRMapping map;
    for (auto [from, to] : llvm::zip(backwardInputs, entry->getArguments()))
      map.map(from, to);
    for (Operation &op : body.without_terminator())
      if (backwardOps.contains(&op))
        bb.clone(op, map);
    SmallVector<Value> returned;
    for (auto [a, g] : llvm::zip(differentiated, d->argGrads))
      returned.push_back(g ? map.lookup(g)
                           : zerosLike(bb, block.getLoc(),
                                       block.getArgumentTypes()[a]));
    func::ReturnOp::create(bb, block.getLoc(), returned);
  }
  d->function.erase();
  return result;
}

} // namespace sinter::graph
