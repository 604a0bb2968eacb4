//===- Accumulate.cpp - The micro-batch loop of a training step -----------===//
//
// A train function computes one micro-batch: its loss share, metrics,
// gradients and new states. This pass wraps it into the step of one rank:
// global counts first (from the targets alone), then k iterations of the
// micro-batch, summing into accumulators that the loop carries, then the
// point where gradients are final. k is read at run time, so one binary
// serves any global batch and world size.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sinter/IR/SinterAttrs.h"
#include "dialects/Train/IR/TrainOps.h"
#include "dialects/Train/Transforms/Passes.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace sinter::train {
#define GEN_PASS_DEF_TRAINACCUMULATE
#include "dialects/Train/Transforms/Passes.h.inc"

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// A tensor of `type` filled with zeros.
Value zeros(OpBuilder &b, Location loc, RankedTensorType type) {
  Type et = type.getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(et));
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), et);
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

/// `fn(x)` elementwise into `init` (same shape), as one parallel generic.
Value mapInto(OpBuilder &b, Location loc, ValueRange inputs, Value init,
              function_ref<Value(OpBuilder &, Location, ValueRange)> fn) {
  int64_t rank = typeOf(init).getRank();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(inputs.size() + 1, id);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
             iterators,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               linalg::YieldOp::create(nb, l, fn(nb, l, a));
             })
      .getResult(0);
}

/// acc + value, written into acc's buffer.
Value accumulate(OpBuilder &b, Location loc, Value acc, Value value) {
  return mapInto(b, loc, ValueRange{value}, acc,
                 [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                   if (isa<FloatType>(a[0].getType()))
                     return arith::AddFOp::create(nb, l, a[1], a[0]);
                   return arith::AddIOp::create(nb, l, a[1], a[0]);
                 });
}

/// value / k, in place; integers divide exactly (every micro-batch moved an
/// integer state by the same amount).
Value divideBy(OpBuilder &b, Location loc, Value value, Value k) {
  Type et = typeOf(value).getElementType();
  Value kInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), k);
  Value divisor = kInt;
  if (isa<FloatType>(et))
    divisor = arith::SIToFPOp::create(b, loc, et, kInt);
  else if (!et.isInteger(64))
    divisor = arith::TruncIOp::create(b, loc, et, kInt);
  return mapInto(b, loc, ValueRange{}, value,
                 [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                   if (isa<FloatType>(et))
                     return arith::DivFOp::create(nb, l, a[0], divisor);
                   return arith::DivSIOp::create(nb, l, a[0], divisor);
                 });
}

/// A float scalar as a rank-0 tensor.
Value asTensor(OpBuilder &b, Location loc, Value scalar) {
  return tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, scalar.getType()), scalar);
}

class StepBuilder {
public:
  explicit StepBuilder(func::FuncOp f) : func(f) {}

  LogicalResult run() {
    Block *body = &func.front();
    auto ret = cast<func::ReturnOp>(body->getTerminator());
    for (BlockArgument arg : body->getArguments())
      if (auto name = attrs::input.getArg(func, arg.getArgNumber()))
        inputs.push_back({arg, name});

    // The new entry block: the same arguments, the loops, the return.
    Block *entry = new Block();
    func.getBody().push_front(entry);
    for (BlockArgument arg : body->getArguments())
      entry->addArgument(arg.getType(), arg.getLoc());
    OpBuilder b = OpBuilder::atBlockEnd(entry);
    Location loc = func.getLoc();
    for (auto &in : inputs)
      latest[in.arg] = entry->getArgument(in.arg.getArgNumber());
    k = MicroBatchCountOp::create(b, loc, b.getIndexType());
    zero = arith::ConstantIndexOp::create(b, loc, 0);
    one = arith::ConstantIndexOp::create(b, loc, 1);

    IRMapping prelude;
    if (failed(buildFractions(b, body, prelude)) ||
        failed(buildCounts(b, body, prelude)))
      return failure();
    buildMainLoop(b, body, ret, prelude);
    body->erase();
    return success();
  }

private:
  struct Input {
    BlockArgument arg; ///< of the old body
    StringAttr name;
  };

  /// train.sample_fraction = b / G, once before the loops.
  LogicalResult buildFractions(OpBuilder &b, Block *body, IRMapping &prelude) {
    if (inputs.empty() && !body->getOps<SampleFractionOp>().empty())
      return func.emitError("a step without inputs has no micro-batch size");
    for (SampleFractionOp f : llvm::make_early_inc_range(body->getOps<SampleFractionOp>())) {
      Location loc = f.getLoc();
      Type et = typeOf(f.getResult()).getElementType();
      int64_t micro = typeOf(inputs.front().arg).getDimSize(0);
      Value global = GlobalBatchOp::create(b, loc, b.getIndexType());
      auto toFloat = [&](Value index) -> Value {
        Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
        return arith::SIToFPOp::create(b, loc, et, i);
      };
      Value microIndex = arith::ConstantIndexOp::create(b, loc, micro);
      Value fraction = arith::DivFOp::create(b, loc, toFloat(microIndex),
                                             toFloat(global));
      prelude.map(f.getResult(), asTensor(b, loc, fraction));
    }
    return success();
  }

  /// One loop over the micro-batches per train.global_count: it loads the
  /// inputs the mask reads, recomputes the mask and adds up its true
  /// elements.
  LogicalResult buildCounts(OpBuilder &b, Block *body, IRMapping &prelude) {
    for (GlobalCountOp count : body->getOps<GlobalCountOp>()) {
      SetVector<Operation *> slice;
      BackwardSliceOptions options;
      options.inclusive = false;
      options.omitBlockArguments = false;
      (void)getBackwardSlice(count.getOperation(), &slice, options);
      SmallVector<Operation *> ordered(slice.begin(), slice.end());
      llvm::sort(ordered, [](Operation *x, Operation *y) {
        return x->isBeforeInBlock(y);
      });
      SmallVector<Input> used;
      for (Operation *op : ordered) {
        if (!isMemoryEffectFree(op) || op->getNumRegions() > 1)
          return count.emitError("a global count must be computed from the "
                                 "step's inputs alone");
      }
      // The arguments the mask reads: inputs only.
      ordered.push_back(count);
      for (Operation *op : ordered) {
        for (Value operand : op->getOperands()) {
          auto arg = dyn_cast<BlockArgument>(operand);
          if (!arg || arg.getOwner() != body)
            continue;
          auto it = llvm::find_if(inputs, [&](const Input &in) { return in.arg == arg; });
          if (it == inputs.end())
            return count.emitError("a global count must be computed from the "
                                   "step's inputs alone, not from a parameter "
                                   "or a state");
          if (!llvm::any_of(used, [&](const Input &u) { return u.arg == arg; }))
            used.push_back(*it);
        }
      }
      Location loc = count.getLoc();
      Value init = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
      SmallVector<Value> carried = {init};
      for (const Input &in : used)
        carried.push_back(latest[in.arg]);
      auto loop = scf::ForOp::create(b, loc, zero, k, one, carried);
      OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
      IRMapping map;
      SmallVector<Value> yields(1);
      for (auto [i, in] : llvm::enumerate(used)) {
        Value loaded = MicroBatchInputOp::create(
            lb, loc, typeOf(in.arg), loop.getRegionIterArg(i + 1),
            loop.getInductionVar(), in.name);
        map.map(in.arg, loaded);
        yields.push_back(loaded);
      }
      ordered.pop_back();
      for (Operation *op : ordered)
        lb.clone(*op, map);
      Value mask = map.lookupOrDefault(count.getMask());
      Value n = countTrue(lb, loc, mask);
      yields[0] = arith::AddIOp::create(lb, loc, loop.getRegionIterArg(0), n);
      scf::YieldOp::create(lb, loc, yields);
      for (auto [i, in] : llvm::enumerate(used))
        latest[in.arg] = loop.getResult(i + 1);
      Type et = typeOf(count.getResult()).getElementType();
      Value all = SumOverRanksOp::create(b, loc, b.getI64Type(), loop.getResult(0));
      Value total = arith::SIToFPOp::create(b, loc, et, all);
      prelude.map(count.getResult(), asTensor(b, loc, total));
    }
    return success();
  }

  /// The number of true elements of an i1 tensor, as i64.
  Value countTrue(OpBuilder &b, Location loc, Value mask) {
    RankedTensorType t = typeOf(mask);
    int64_t rank = t.getRank();
    auto scalarType = RankedTensorType::get({}, b.getI64Type());
    Value init = zeros(b, loc, scalarType);
    SmallVector<AffineMap> maps = {
        b.getMultiDimIdentityMap(rank),
        AffineMap::get(rank, 0, {}, b.getContext())};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::reduction);
    Value sum = linalg::GenericOp::create(
                    b, loc, TypeRange{scalarType}, ValueRange{mask},
                    ValueRange{init}, maps, iterators,
                    [](OpBuilder &nb, Location l, ValueRange a) {
                      Value v = arith::ExtUIOp::create(nb, l, nb.getI64Type(), a[0]);
                      linalg::YieldOp::create(
                          nb, l, Value(arith::AddIOp::create(nb, l, a[1], v)));
                    })
                    .getResult(0);
    return tensor::ExtractOp::create(b, loc, sum, ValueRange{});
  }

  void buildMainLoop(OpBuilder &b, Block *body, func::ReturnOp ret,
                     IRMapping &prelude) {
    Location loc = func.getLoc();
    // What the step returns: everything but outputs; metrics and states are
    // means over the micro-batches, the rest sums.
    SmallVector<unsigned> kept;
    for (unsigned i = 0; i < ret.getNumOperands(); ++i)
      if (!attrs::output.getResult(func, i))
        kept.push_back(i);

    SmallVector<Value> carried;
    for (const Input &in : inputs)
      carried.push_back(latest[in.arg]);
    for (unsigned i : kept)
      carried.push_back(zeros(b, loc, typeOf(ret.getOperand(i))));
    auto loop = scf::ForOp::create(b, loc, zero, k, one, carried);
    Block *loopBody = loop.getBody();
    OpBuilder lb = OpBuilder::atBlockBegin(loopBody);
    SmallVector<Value> yields;
    for (auto [i, in] : llvm::enumerate(inputs)) {
      Value loaded = MicroBatchInputOp::create(lb, loc, typeOf(in.arg),
                                               loop.getRegionIterArg(i),
                                               loop.getInductionVar(), in.name);
      in.arg.replaceAllUsesWith(loaded);
      yields.push_back(loaded);
    }
    // Parameters and states are the same in every micro-batch.
    for (BlockArgument arg : body->getArguments())
      arg.replaceAllUsesWith(func.front().getArgument(arg.getArgNumber()));

    // The micro-batch's computation moves into the loop unchanged.
    loopBody->getOperations().splice(loopBody->end(), body->getOperations(),
                                     body->begin(), Block::iterator(ret));
    for (auto &[from, to] : prelude.getValueMap())
      Value(from).replaceAllUsesWith(to);
    for (MicroBatchIndexOp index :
         llvm::make_early_inc_range(loopBody->getOps<MicroBatchIndexOp>())) {
      index.replaceAllUsesWith(loop.getInductionVar());
      index.erase();
    }
    for (Operation &op : llvm::make_early_inc_range(*loopBody))
      if (isa<SampleFractionOp, GlobalCountOp>(op))
        op.erase();
    lb.setInsertionPointToEnd(loopBody);
    for (auto [j, i] : llvm::enumerate(kept))
      yields.push_back(accumulate(lb, ret.getOperand(i).getLoc(),
                                  loop.getRegionIterArg(inputs.size() + j),
                                  ret.getOperand(i)));
    scf::YieldOp::create(lb, loc, yields);

    // After the last micro-batch: gradients are final, means are taken.
    GradientsReadyOp::create(b, loc);
    SmallVector<Value> results;
    SmallVector<Type> resultTypes;
    SmallVector<DictionaryAttr> resultAttrs;
    for (auto [j, i] : llvm::enumerate(kept)) {
      Value v = loop.getResult(inputs.size() + j);
      if (attrs::metric.getResult(func, i) || attrs::state.getResult(func, i))
        v = divideBy(b, loc, v, k);
      results.push_back(v);
      resultTypes.push_back(v.getType());
      DictionaryAttr attrs = func.getResultAttrDict(i);
      resultAttrs.push_back(attrs ? attrs : b.getDictionaryAttr({}));
    }
    func::ReturnOp::create(b, loc, results);
    ret.erase();
    func.setFunctionType(
        FunctionType::get(func.getContext(), func.getArgumentTypes(), resultTypes));
    func.setAllResultAttrs(resultAttrs);
  }

  func::FuncOp func;
  SmallVector<Input> inputs;
  /// The newest tensor of each input's buffer: loops chain them so each
  /// loads in place.
  DenseMap<Value, Value> latest;
  Value k, zero, one;
};

/// A block that reads the micro-batch index (a dropout's key) takes it as a
/// new last argument; each call reads it where it is, so the micro-batch
/// loop passes its induction variable.
LogicalResult passMicroBatchIndex(ModuleOp module) {
  for (auto block : module.getOps<func::FuncOp>()) {
    if (!attrs::block.has(block) || block.isExternal())
      continue;
    SmallVector<MicroBatchIndexOp> reads;
    block.walk([&](MicroBatchIndexOp op) { reads.push_back(op); });
    if (reads.empty())
      continue;
    Type indexType = IndexType::get(module.getContext());
    unsigned position = block.getNumArguments();
    if (failed(block.insertArgument(position, indexType, {}, block.getLoc())))
      return failure();
    for (MicroBatchIndexOp op : reads) {
      op.replaceAllUsesWith(block.getArgument(position));
      op.erase();
    }
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(block, module);
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (!call)
        return use.getUser()->emitError("internal error: a block used other "
                                        "than by a call");
      OpBuilder b(call);
      Value index = MicroBatchIndexOp::create(b, call.getLoc(), indexType);
      call.getOperandsMutable().append(index);
    }
  }
  return success();
}

struct TrainAccumulate : public impl::TrainAccumulateBase<TrainAccumulate> {
  void runOnOperation() override {
    if (failed(passMicroBatchIndex(getOperation())))
      return signalPassFailure();
    for (auto f : getOperation().getOps<func::FuncOp>()) {
      auto phase = attrs::phase.get(f);
      if (!phase || phase != "train" || f.isExternal())
        continue;
      if (failed(StepBuilder(f).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace sinter::train
