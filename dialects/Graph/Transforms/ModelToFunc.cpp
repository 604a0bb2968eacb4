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

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace sinter::graph {
#define GEN_PASS_DEF_GRAPHMODELTOFUNC
#include "dialects/Graph/Transforms/Passes.h.inc"
} // namespace sinter::graph

using namespace mlir;

namespace sinter::graph {
namespace {

/// The exclusive upper bound on an integer input's values that its uses
/// imply (a class index, a token id), or 0 when none does.
int64_t valueBound(InputOp input) {
  int64_t bound = 0;
  auto tighten = [&](int64_t b) { bound = bound ? std::min(bound, b) : b; };
  auto lastDim = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape().back();
  };
  for (OpOperand &use : input.getResult().getUses()) {
    Operation *user = use.getOwner();
    if (auto e = dyn_cast<EmbeddingOp>(user); e && use.get() == e.getIds())
      tighten(e.getTable().getType().getDimSize(0));
    else if (auto c = dyn_cast<CrossEntropyOp>(user); c && use.get() == c.getTarget())
      tighten(lastDim(c.getLogits()));
    else if (auto n = dyn_cast<NllLossOp>(user); n && use.get() == n.getTarget())
      tighten(lastDim(n.getLogp()));
    else if (auto a = dyn_cast<AccuracyOp>(user); a && use.get() == a.getTarget())
      tighten(lastDim(a.getLogits()));
    else if (auto o = dyn_cast<OneHotOp>(user))
      tighten(o.getNumClasses());
  }
  return bound > 0 ? bound : 0;
}

/// The argument attributes of one input, param or state.
DictionaryAttr argumentAttrs(Operation *op, Builder &b) {
  SmallVector<NamedAttribute> attrs;
  if (auto input = dyn_cast<InputOp>(op)) {
    attrs.push_back(b.getNamedAttr("sinter.input", input.getNameAttr()));
    if (int64_t bound = valueBound(input))
      attrs.push_back(
          b.getNamedAttr("sinter.value_bound", b.getI64IntegerAttr(bound)));
  } else if (auto param = dyn_cast<ParamOp>(op)) {
    attrs.push_back(b.getNamedAttr("sinter.param", param.getNameAttr()));
    attrs.push_back(b.getNamedAttr("sinter.init", param.getInitAttr()));
    attrs.push_back(b.getNamedAttr("sinter.init_args", param.getInitArgsAttr()));
  } else {
    auto state = cast<StateOp>(op);
    attrs.push_back(b.getNamedAttr("sinter.state", state.getNameAttr()));
    attrs.push_back(b.getNamedAttr("sinter.init", state.getInitAttr()));
    attrs.push_back(b.getNamedAttr("sinter.init_args", state.getInitArgsAttr()));
  }
  return b.getDictionaryAttr(attrs);
}

/// The name attribute that tags the result made from `sink`, a loss,
/// metric, output or state update.
NamedAttribute resultTag(Operation *sink, Builder &b) {
  if (isa<LossOp>(sink))
    return b.getNamedAttr("sinter.loss", b.getStringAttr("loss"));
  if (auto metric = dyn_cast<MetricOp>(sink))
    return b.getNamedAttr("sinter.metric", metric.getNameAttr());
  if (auto output = dyn_cast<OutputOp>(sink))
    return b.getNamedAttr("sinter.output", output.getNameAttr());
  if (auto gradient = dyn_cast<GradientOp>(sink))
    return b.getNamedAttr("sinter.gradient", gradient.getNameAttr());
  auto update = cast<StateUpdateOp>(sink);
  return b.getNamedAttr("sinter.state", update.getNameAttr());
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
  func->setAttr("sinter.phase", model.getPhaseAttr());

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
