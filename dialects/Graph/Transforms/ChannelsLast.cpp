//===- ChannelsLast.cpp - NHWC activations between CPU convolutions -------===//
//
// oneDNN's convolutions run on channels-last activations; handed NCHW
// arrays, each call reorders its input and output, which costs a CPU conv
// net about a sixth of its step. Here every f32 convolution of a CPU module
// becomes a channels-last one between two transposes, and the transposes
// back to NCHW are pushed down through what reads them: elementwise ops
// (the other operand transposed too: a per-channel view becomes a reshape),
// batch-norm statistics (their axes renumbered), poolings (made channels
// last, which the CPU's library runs), and the arguments and results of
// the functions of repeated blocks. A transpose that meets its inverse
// disappears, so activations stay NHWC from one convolution to the next
// and across blocks; what nothing carries further (a dropout, a reshape)
// reads one transpose back to NCHW. Autodiff runs after, so the gradients
// follow the same layout.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <set>

using namespace mlir;

namespace sinter::graph {
#define GEN_PASS_DEF_GRAPHCHANNELSLAST
#include "dialects/Graph/Transforms/Passes.h.inc"

namespace {

/// NCHW -> NHWC, and its inverse.
constexpr int64_t kToLast[4] = {0, 2, 3, 1};
constexpr int64_t kToFirst[4] = {0, 3, 1, 2};

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// `t` with its dimensions permuted: result dim i is dim perm[i].
RankedTensorType permuted(RankedTensorType t, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(t.getDimSize(p));
  return RankedTensorType::get(shape, t.getElementType());
}

/// The NHWC value whose NCHW view `v` is: v = transpose(a, kToFirst).
Value nhwcBehind(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t || t.getPermutation() != ArrayRef<int64_t>(kToFirst))
    return Value();
  return t.getInput();
}

bool isRank4(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.getRank() == 4;
}

bool isElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaximumOp, MinimumOp, CompareOp,
             WhereOp, NegOp, AbsOp, ReluOp, ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp,
             SigmoidOp, SiluOp, GeluOp, CastOp>(op);
}

class ChannelsLast {
public:
  explicit ChannelsLast(ModuleOp module) : module(module), builder(module.getContext()) {}

  void run() {
    SmallVector<Conv2dOp> convs;
    module.walk([&](Conv2dOp c) {
      if (!c.getChannelsLast() && typeOf(c.getResult()).getRank() == 4 &&
          typeOf(c.getResult()).getElementType().isF32())
        convs.push_back(c);
    });
    if (convs.empty())
      return;
    for (Conv2dOp c : convs)
      makeChannelsLast(c);
    // Push the transposes down until nothing moves: within bodies, then
    // across the functions' boundaries, which may open more within bodies.
    bool changed = true;
    while (changed) {
      changed = false;
      while (sinkOnce())
        changed = true;
      changed |= crossBoundaries();
    }
    cleanUp();
  }

private:
  ModuleOp module;
  OpBuilder builder;
  /// The (function, argument) pairs already made NHWC.
  std::set<std::pair<Operation *, unsigned>> nhwcArguments;

  Value transpose(Location loc, Value v, ArrayRef<int64_t> perm) {
    // A transpose of a transpose is one transpose, or none.
    if (auto inner = v.getDefiningOp<TransposeOp>()) {
      SmallVector<int64_t> composed;
      for (int64_t p : perm)
        composed.push_back(inner.getPermutation()[p]);
      if (llvm::equal(composed, llvm::seq<int64_t>(0, composed.size())))
        return inner.getInput();
      return TransposeOp::create(builder, loc, inner.getInput(),
                                 builder.getDenseI64ArrayAttr(composed));
    }
    return TransposeOp::create(builder, loc, v, builder.getDenseI64ArrayAttr(perm));
  }

  void makeChannelsLast(Conv2dOp c) {
    builder.setInsertionPoint(c);
    Location loc = c.getLoc();
    Value x = transpose(loc, c.getInput(), kToLast);
    auto last = Conv2dOp::create(builder, loc, x, c.getWeight(), c.getStrideAttr(),
                                 c.getPaddingAttr(), c.getDilationAttr(), c.getGroupsAttr(),
                                 builder.getUnitAttr());
    c.getResult().replaceAllUsesWith(transpose(loc, last.getResult(), kToFirst));
    c.erase();
  }

  /// One op that reads an NCHW view of an NHWC value, moved below it.
  bool sinkOnce() {
    Operation *found = nullptr;
    module.walk([&](Operation *op) {
      if (found)
        return WalkResult::interrupt();
      if (canSink(op))
        found = op;
      return WalkResult::advance();
    });
    if (!found)
      return false;
    sink(found);
    return true;
  }

  bool canSink(Operation *op) {
    if (!llvm::any_of(op->getOperands(), [](Value v) { return bool(nhwcBehind(v)); }))
      return false;
    if (auto t = dyn_cast<TransposeOp>(op))
      return true;
    if (isa<BatchNormStatsOp, BatchNormCountOp>(op))
      return keepsChannelOrder(op);
    if (isa<MaxPool2dOp, AvgPool2dOp, GlobalAvgPool2dOp>(op))
      return !op->hasAttr("channels_last") &&
             typeOf(op->getResult(0)).getElementType().isF32();
    if (!isElementwise(op) || op->getNumResults() != 1 || !isRank4(op->getResult(0)))
      return false;
    // Every other operand is a scalar or an NCHW tensor of rank 4.
    return llvm::all_of(op->getOperands(), [](Value v) {
      auto t = dyn_cast<RankedTensorType>(v.getType());
      return t && (t.getRank() == 0 || t.getRank() == 4);
    });
  }

  static ArrayRef<int64_t> axesOf(Operation *op) {
    if (auto s = dyn_cast<BatchNormStatsOp>(op))
      return s.getAxes();
    return cast<BatchNormCountOp>(op).getAxes();
  }

  /// Statistics over N, H and W (every axis but the channels): their
  /// results do not depend on the layout.
  bool keepsChannelOrder(Operation *op) {
    SmallVector<int64_t> axes;
    for (int64_t a : axesOf(op))
      axes.push_back(a < 0 ? a + 4 : a);
    llvm::sort(axes);
    return axes == SmallVector<int64_t>{0, 2, 3};
  }

  void sink(Operation *op) {
    builder.setInsertionPoint(op);
    Location loc = op->getLoc();
    if (auto t = dyn_cast<TransposeOp>(op)) {
      Value moved = transpose(loc, t.getInput(), t.getPermutation());
      t.getResult().replaceAllUsesWith(moved);
      t.erase();
      return;
    }
    if (isa<BatchNormStatsOp, BatchNormCountOp>(op)) {
      Operation *clone = builder.clone(*op);
      clone->setOperand(0, nhwcBehind(op->getOperand(0)));
      clone->setAttr("axes", builder.getDenseI64ArrayAttr({0, 1, 2}));
      op->replaceAllUsesWith(clone->getResults());
      op->erase();
      return;
    }
    if (isa<MaxPool2dOp, AvgPool2dOp, GlobalAvgPool2dOp>(op)) {
      Operation *clone = builder.clone(*op);
      clone->setOperand(0, nhwcBehind(op->getOperand(0)));
      clone->setAttr("channels_last", builder.getUnitAttr());
      Value result = clone->getResult(0);
      // A global pooling gives [N, C] in either layout.
      if (isa<GlobalAvgPool2dOp>(op)) {
        op->replaceAllUsesWith(clone->getResults());
      } else {
        result.setType(permuted(typeOf(result), kToLast));
        op->getResult(0).replaceAllUsesWith(transpose(loc, result, kToFirst));
      }
      op->erase();
      return;
    }
    SmallVector<Value> operands;
    for (Value v : op->getOperands())
      operands.push_back(typeOf(v).getRank() == 4 ? transpose(loc, v, kToLast) : v);
    Operation *clone = builder.clone(*op);
    clone->setOperands(operands);
    Value result = clone->getResult(0);
    result.setType(permuted(typeOf(result), kToLast));
    op->getResult(0).replaceAllUsesWith(transpose(loc, result, kToFirst));
    op->erase();
  }

  /// The private functions whose every use is a call.
  SmallVector<std::pair<func::FuncOp, SmallVector<func::CallOp>>> callees() {
    SmallVector<std::pair<func::FuncOp, SmallVector<func::CallOp>>> found;
    for (auto f : module.getOps<func::FuncOp>()) {
      if (!f.isPrivate() || f.isExternal() || !f.getBody().hasOneBlock())
        continue;
      std::optional<SymbolTable::UseRange> uses = f.getSymbolUses(module);
      if (!uses)
        continue;
      SmallVector<func::CallOp> calls;
      bool onlyCalls = true;
      for (const SymbolTable::SymbolUse &use : *uses) {
        auto call = dyn_cast<func::CallOp>(use.getUser());
        onlyCalls &= bool(call);
        if (call)
          calls.push_back(call);
      }
      if (onlyCalls && !calls.empty())
        found.push_back({f, calls});
    }
    return found;
  }

  /// Results returned as NCHW views and arguments passed as NCHW views
  /// become NHWC, with the views at the other side.
  bool crossBoundaries() {
    bool changed = false;
    for (auto &[f, calls] : callees()) {
      bool crossed = false;
      auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
      for (OpOperand &operand : ret->getOpOperands()) {
        Value inner = nhwcBehind(operand.get());
        if (!inner)
          continue;
        unsigned i = operand.getOperandNumber();
        operand.set(inner);
        for (func::CallOp call : calls) {
          Value r = call.getResult(i);
          r.setType(inner.getType());
          builder.setInsertionPointAfter(call);
          Value view = transpose(call.getLoc(), r, kToFirst);
          r.replaceAllUsesExcept(view, view.getDefiningOp());
        }
        crossed = true;
      }
      Block &entry = f.getBody().front();
      for (BlockArgument arg : entry.getArguments()) {
        unsigned i = arg.getArgNumber();
        if (nhwcArguments.count({f, i}) || !llvm::all_of(calls, [&](func::CallOp c) {
              return bool(nhwcBehind(c.getOperand(i)));
            }))
          continue;
        for (func::CallOp call : calls)
          call->setOperand(i, nhwcBehind(call.getOperand(i)));
        arg.setType(permuted(typeOf(arg), kToLast));
        builder.setInsertionPointToStart(&entry);
        Value view = transpose(f.getLoc(), arg, kToFirst);
        arg.replaceAllUsesExcept(view, view.getDefiningOp());
        nhwcArguments.insert({f, i});
        crossed = true;
      }
      if (crossed)
        f.setType(FunctionType::get(f.getContext(), entry.getArgumentTypes(),
                                    ret.getOperandTypes()));
      changed |= crossed;
    }
    return changed;
  }

  /// A transpose that moves only unit dimensions (a per-channel view) is a
  /// reshape; what no one reads goes.
  void cleanUp() {
    SmallVector<TransposeOp> transposes;
    module.walk([&](TransposeOp t) { transposes.push_back(t); });
    for (TransposeOp t : transposes) {
      RankedTensorType in = typeOf(t.getInput());
      SmallVector<int64_t> order;
      for (int64_t p : t.getPermutation())
        if (in.getDimSize(p) != 1)
          order.push_back(p);
      if (!in.hasStaticShape() || !llvm::is_sorted(order))
        continue;
      builder.setInsertionPoint(t);
      Value input = t.getInput();
      // A reshape of a reshape reads the first one's input.
      if (auto r = input.getDefiningOp<ReshapeOp>())
        input = r.getInput();
      auto reshape = ReshapeOp::create(builder, t.getLoc(), t.getType(), input);
      t.getResult().replaceAllUsesWith(reshape.getResult());
      t.erase();
    }
    SmallVector<Operation *> dead;
    bool erased = true;
    while (erased) {
      erased = false;
      dead.clear();
      module.walk([&](Operation *op) {
        if (isa<TransposeOp, ReshapeOp>(op) && op->use_empty())
          dead.push_back(op);
      });
      for (Operation *op : dead)
        op->erase();
      erased = !dead.empty();
    }
  }
};

struct GraphChannelsLast : public impl::GraphChannelsLastBase<GraphChannelsLast> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    StringAttr device = attrs::device.get(module);
    if (!device || device.getValue() != "cpu")
      return;
    ChannelsLast(module).run();
  }
};

} // namespace
} // namespace sinter::graph
