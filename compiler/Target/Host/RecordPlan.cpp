//===- RecordPlan.cpp - Each step's buffer plan, before bufferization -----===//

#include "compiler/Target/Host/Passes.h"
#include "compiler/Target/Host/StepPlan.h"
#include "dialects/Sinter/IR/SinterAttrs.h"
#include "runtime/contract/sinter_plan.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace sinter::host {
#define GEN_PASS_DEF_RECORDPLAN
#include "compiler/Target/Host/Passes.h.inc"

namespace {

std::optional<plan::DType> dtypeOf(Type t) {
  if (t.isF64()) return plan::F64;
  if (t.isF32()) return plan::F32;
  if (t.isBF16()) return plan::BF16;
  if (t.isF16()) return plan::F16;
  if (t.isInteger(64)) return plan::I64;
  if (t.isInteger(32)) return plan::I32;
  if (t.isInteger(1)) return plan::BOOL;
  return std::nullopt;
}

/// Fills `buffer` from a tensor type and the `sinter.*` attributes of one
/// argument or result.
LogicalResult describe(Location loc, Type type, DictionaryAttr dict,
                       plan::Buffer &buffer) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return emitError(loc) << "a step's buffers need static shapes, got " << type;
  std::optional<plan::DType> dtype = dtypeOf(tensor.getElementType());
  if (!dtype)
    return emitError(loc) << "unsupported element type " << type;
  buffer.set_dtype(*dtype);
  for (int64_t d : tensor.getShape())
    buffer.add_shape(d);
  static const std::pair<attrs::Owned<StringAttr>, plan::BufferKind> kinds[] = {
      {attrs::input, plan::INPUT},   {attrs::param, plan::PARAM},
      {attrs::loss, plan::LOSS},     {attrs::metric, plan::METRIC},
      {attrs::output, plan::OUTPUT}, {attrs::gradient, plan::GRADIENT},
      {attrs::optimizerState, plan::OPTIMIZER_STATE},
      {attrs::gradNorm, plan::GRAD_NORM},
      {attrs::gradientSlices, plan::GRADIENT_SLICES},
      {attrs::nonFinite, plan::NON_FINITE}};
  for (const auto &[attr, kind] : kinds) {
    if (auto name = attr.in(dict)) {
      buffer.set_name(name.str());
      buffer.set_kind(kind);
    }
  }
  if (auto name = attrs::state.in(dict))
    buffer.set_name(name.str());
  if (auto slot = attrs::slot.in(dict))
    buffer.set_slot(slot.str());
  if (auto global = attrs::globalShape.in(dict))
    for (int64_t d : global.asArrayRef())
      buffer.add_global_shape(d);
  if (auto init = attrs::init.in(dict)) {
    buffer.set_init(init.str());
    if (auto args = attrs::initArgs.in(dict))
      for (double a : args.asArrayRef())
        buffer.add_init_args(a);
  }
  if (auto bound = attrs::valueBound.in(dict))
    buffer.set_value_bound(bound.getInt());
  if (auto source = attrs::valueBoundSource.in(dict))
    buffer.set_value_bound_source(source.str());
  if (auto ignored = attrs::ignoreIndex.in(dict))
    buffer.set_ignore_index(ignored.getInt());
  if (!buffer.has_name())
    return emitError(loc) << "a step's argument or result has no sinter name";
  return success();
}

struct RecordPlan : public impl::RecordPlanBase<RecordPlan> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      auto phase = attrs::phase.get(func);
      if (!phase)
        continue;
      plan::Step step;
      // The eval step's symbol is `<model>.eval`.
      StringRef model = func.getSymName();
      model.consume_back(".eval");
      step.set_model(model.str());
      step.set_phase(phase.str());
      FunctionType type = func.getFunctionType();
      for (unsigned i = 0; i < type.getNumInputs(); ++i) {
        plan::Buffer *b = step.add_buffers();
        if (failed(describe(func.getLoc(), type.getInput(i),
                            func.getArgAttrDict(i), *b)))
          return signalPassFailure();
        if (attrs::state.getArg(func, i))
          b->set_kind(plan::STATE);
      }
      for (unsigned i = 0; i < type.getNumResults(); ++i) {
        // Updates in place are the arguments' buffers, not buffers of
        // their own.
        if (attrs::updates.getResult(func, i))
          continue;
        plan::Buffer *b = step.add_buffers();
        if (failed(describe(func.getLoc(), type.getResult(i),
                            func.getResultAttrDict(i), *b)))
          return signalPassFailure();
        if (attrs::state.getResult(func, i))
          b->set_kind(plan::STATE_OUT);
      }
      if (auto optimizer = attrs::optimizer.get(func))
        step.set_optimizer(optimizer.str());
      if (auto device = attrs::device.get(getOperation()))
        step.set_device(device.str());
      if (auto world = attrs::worldSize.get(getOperation()))
        step.set_world_size(world.getInt());
      if (auto micro = attrs::microBatch.get(getOperation()))
        step.set_micro_batch(micro.getInt());
      if (auto buckets = attrs::buckets.get(func))
        for (Attribute bucket : buckets) {
          plan::Bucket *out = step.add_buckets();
          for (Attribute name : cast<ArrayAttr>(bucket))
            out->add_gradients(cast<StringAttr>(name).str());
        }
      attrs::plan.set(func, StringAttr::get(&getContext(), step.SerializeAsString()));
    }
  }
};

} // namespace
std::optional<std::string> completePlan(Operation *step) {
  auto bytes = attrs::plan.get(step);
  if (!bytes)
    return std::nullopt;
  auto arena = attrs::arenaBytes.get(step);
  if (!arena)
    return bytes.getValue().str();
  plan::Step plan;
  plan.ParseFromString(bytes.getValue().str());
  if (auto communication = attrs::communicationBytes.get(step))
    plan.set_communication_bytes(communication.getInt());
  plan::Buffer *workspace = plan.add_buffers();
  workspace->set_name("workspace");
  workspace->set_kind(plan::WORKSPACE);
  workspace->set_dtype(plan::BOOL); // one byte per element
  workspace->add_shape(arena.getInt());
  return plan.SerializeAsString();
}

} // namespace sinter::host
