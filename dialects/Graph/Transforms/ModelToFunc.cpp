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

/// The argument attributes of one input, param or state.
DictionaryAttr argumentAttrs(Operation *op, Builder &b) {
  SmallVector<NamedAttribute> attrs;
  if (auto input = dyn_cast<InputOp>(op)) {
    attrs.push_back(b.getNamedAttr("sinter.input", input.getNameAttr()));
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

void convertModel(ModelOp model) {
  Block &body = *model.getBody();
  OpBuilder b(model);
  SmallVector<Operation *> arguments;
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  SmallVector<Operation *> sinks;
  // The loss comes first, then metrics, then state updates, each in order.
  for (Operation &op : body) {
    if (isa<InputOp, ParamOp, StateOp>(op))
      arguments.push_back(&op);
    if (auto loss = dyn_cast<LossOp>(op)) {
      results.insert(results.begin(), loss.getValue());
      resultAttrs.insert(resultAttrs.begin(),
                         b.getDictionaryAttr(b.getNamedAttr(
                             "sinter.loss", b.getStringAttr("loss"))));
      sinks.push_back(&op);
    }
  }
  for (Operation &op : body) {
    if (auto metric = dyn_cast<MetricOp>(op)) {
      results.push_back(metric.getValue());
      resultAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr("sinter.metric", metric.getNameAttr())));
      sinks.push_back(&op);
    }
  }
  for (Operation &op : body) {
    if (auto update = dyn_cast<StateUpdateOp>(op)) {
      results.push_back(update.getValue());
      resultAttrs.push_back(b.getDictionaryAttr(
          b.getNamedAttr("sinter.state", update.getNameAttr())));
      sinks.push_back(&op);
    }
  }

  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  for (Operation *op : arguments) {
    argTypes.push_back(op->getResult(0).getType());
    argAttrs.push_back(argumentAttrs(op, b));
  }
  auto func = func::FuncOp::create(
      b, model.getLoc(), model.getSymName(),
      b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  func->setAttr("sinter.phase", model.getPhaseAttr());

  Block *entry = func.addEntryBlock();
  entry->getOperations().splice(entry->end(), body.getOperations());
  for (auto [op, arg] : llvm::zip(arguments, entry->getArguments())) {
    op->getResult(0).replaceAllUsesWith(arg);
    op->erase();
  }
  for (Operation *op : sinks)
    op->erase();
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
