//===- ModelToFunc.cpp - graph.model to func.func -------------------------===//
//
// The boundary between the model-level IR and the code generator: after this
// pass a model is an ordinary function whose signature says which argument is
// which input, parameter or state, and which result is the loss, a metric or
// a state's new value. The runtime reads the same tags to bind buffers.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace sinter::graph {
#define GEN_PASS_DEF_GRAPHMODELTOFUNC
#include "dialects/Graph/Transforms/Passes.h.inc"

namespace {

/// `file:line:col` of the user's source line an op comes from.
std::string sourceLine(Location loc) {
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return sourceLine(call.getCallee());
  if (auto name = dyn_cast<NameLoc>(loc))
    return sourceLine(name.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    return fused.getLocations().empty() ? "" : sourceLine(fused.getLocations()[0]);
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().str() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  return "";
}

/// What an integer input's uses accept: values in [0, bound), and the
/// `ignore_index` of a loss that skips such targets.
struct ValueBound {
  int64_t bound = 0;        ///< 0: unbounded
  std::string source;       ///< the op that bounds it most, and its line
  std::optional<int64_t> ignoreIndex;
};

/// Tightens `result` with the bound each use of `value` implies: an
/// embedding's rows, a loss's or metric's classes; through a call, the
/// uses of the callee's argument.
void boundUses(Value value, ValueBound &result, bool &fromOneHot) {
  // A one_hot the gradient of a loss introduced names the same line, less
  // clearly: the user's op is named where one bounds alike.
  auto tighten = [&](int64_t b, Operation *op, StringRef what) {
    bool oneHot = isa<OneHotOp>(op);
    if (b <= 0 || (result.bound && result.bound < b) ||
        (result.bound == b && (oneHot || !fromOneHot)))
      return;
    result.bound = b;
    result.source = (what + " at " + sourceLine(op->getLoc())).str();
    fromOneHot = oneHot;
  };
  auto lastDim = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape().back();
  };
  auto ignoring = [&](std::optional<int64_t> index) {
    if (index)
      result.ignoreIndex = index;
  };
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto e = dyn_cast<EmbeddingOp>(user); e && use.get() == e.getIds()) {
      tighten(e.getTable().getType().getDimSize(0), e, "the embedding");
    } else if (auto c = dyn_cast<CrossEntropyOp>(user);
               c && use.get() == c.getTarget()) {
      tighten(lastDim(c.getLogits()), c, "the classes of cross_entropy");
      ignoring(c.getIgnoreIndex());
    } else if (auto n = dyn_cast<NllLossOp>(user); n && use.get() == n.getTarget()) {
      tighten(lastDim(n.getLogp()), n, "the classes of nll_loss");
      ignoring(n.getIgnoreIndex());
    } else if (auto a = dyn_cast<AccuracyOp>(user); a && use.get() == a.getTarget()) {
      tighten(lastDim(a.getLogits()), a, "the classes of accuracy");
    } else if (auto o = dyn_cast<OneHotOp>(user)) {
      tighten(o.getNumClasses(), o, "the classes of one_hot");
    } else if (auto call = dyn_cast<func::CallOp>(user)) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (callee && !callee.isExternal())
        boundUses(callee.getArgument(use.getOperandNumber()), result,
                  fromOneHot);
    }
  }
}

/// The exclusive upper bound on an integer input's values that its uses
/// imply (a class index, a token id).
ValueBound valueBound(InputOp input) {
  ValueBound result;
  bool fromOneHot = false;
  boundUses(input.getResult(), result, fromOneHot);
  return result;
}

/// The argument attributes of one input, param or state.
DictionaryAttr argumentAttrs(Operation *op, Builder &b) {
  SmallVector<NamedAttribute> attrs;
  if (auto input = dyn_cast<InputOp>(op)) {
    attrs.push_back(attrs::input.named(input.getNameAttr()));
    ValueBound bound = valueBound(input);
    if (bound.bound) {
      attrs.push_back(attrs::valueBound.named(b.getI64IntegerAttr(bound.bound)));
      attrs.push_back(attrs::valueBoundSource.named(b.getStringAttr(bound.source)));
      if (bound.ignoreIndex)
        attrs.push_back(attrs::ignoreIndex.named(b.getI64IntegerAttr(*bound.ignoreIndex)));
    }
  } else if (auto param = dyn_cast<ParamOp>(op)) {
    attrs.push_back(attrs::param.named(param.getNameAttr()));
    attrs.push_back(attrs::init.named(param.getInitAttr()));
    attrs.push_back(attrs::initArgs.named(param.getInitArgsAttr()));
  } else {
    auto state = cast<StateOp>(op);
    attrs.push_back(attrs::state.named(state.getNameAttr()));
    attrs.push_back(attrs::init.named(state.getInitAttr()));
    attrs.push_back(attrs::initArgs.named(state.getInitArgsAttr()));
  }
  return b.getDictionaryAttr(attrs);
}

/// The name attribute that tags the result made from `sink`, a loss,
/// metric, output or state update.
NamedAttribute resultTag(Operation *sink, Builder &b) {
  if (isa<LossOp>(sink))
    return attrs::loss.named(b.getStringAttr("loss"));
  if (auto metric = dyn_cast<MetricOp>(sink))
    return attrs::metric.named(metric.getNameAttr());
  if (auto output = dyn_cast<OutputOp>(sink))
    return attrs::output.named(output.getNameAttr());
  if (auto gradient = dyn_cast<GradientOp>(sink))
    return attrs::gradient.named(gradient.getNameAttr());
  auto update = cast<StateUpdateOp>(sink);
  return attrs::state.named(update.getNameAttr());
}

void convertModel(ModelOp model) {
  Block &body = *model.getBody();
  OpBuilder b(model);
  SmallVector<Operation *> arguments;
  // Results: the loss first, then metrics, outputs and state updates, each
  // in program order.
  SmallVector<Operation *> sinks;
  for (auto isKind : {+[](Operation *op) { return isa<LossOp>(op); },
                      +[](Operation *op) { return isa<MetricOp>(op); },
                      +[](Operation *op) { return isa<OutputOp>(op); },
                      +[](Operation *op) { return isa<GradientOp>(op); },
                      +[](Operation *op) { return isa<StateUpdateOp>(op); }})
    for (Operation &op : body)
      if (isKind(&op))
        sinks.push_back(&op);
  for (Operation &op : body)
    if (isa<InputOp, ParamOp, StateOp>(op))
      arguments.push_back(&op);

  SmallVector<Type> argTypes, resultTypes;
  SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  for (Operation *op : arguments) {
    argTypes.push_back(op->getResult(0).getType());
    argAttrs.push_back(argumentAttrs(op, b));
  }
  // Every sink's last operand is its value.
  for (Operation *sink : sinks) {
    resultTypes.push_back(sink->getOperands().back().getType());
    resultAttrs.push_back(b.getDictionaryAttr(resultTag(sink, b)));
  }
  auto func = func::FuncOp::create(b, model.getLoc(), model.getSymName(),
                                   b.getFunctionType(argTypes, resultTypes));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  attrs::phase.set(func, model.getPhaseAttr());

  Block *entry = func.addEntryBlock();
  entry->getOperations().splice(entry->end(), body.getOperations());
  for (auto [op, arg] : llvm::zip(arguments, entry->getArguments())) {
    op->getResult(0).replaceAllUsesWith(arg);
    op->erase();
  }
  // Read the values only now: a sink may return an argument directly.
  SmallVector<Value> results;
  for (Operation *sink : sinks)
    results.push_back(sink->getOperands().back());
  for (Operation *sink : sinks)
    sink->erase();
  OpBuilder end = OpBuilder::atBlockEnd(entry);
  func::ReturnOp::create(end, model.getLoc(), results);
  model.erase();
}

struct GraphModelToFunc
    : public impl::GraphModelToFuncBase<GraphModelToFunc> {
  void runOnOperation() override {
    for (ModelOp model :
         llvm::make_early_inc_range(getOperation().getOps<ModelOp>()))
      convertModel(model);
  }
};

} // namespace
} // namespace sinter::graph
