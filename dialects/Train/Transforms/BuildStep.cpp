//===- BuildStep.cpp - The update at the end of a training step -----------===//
//
// After train-accumulate (and dist-bucket) a train step ends with its final
// gradients. This pass appends the update, so the compiled step is the whole
// step and no optimizer arithmetic is left to the runtime:
//
//   - the gradients' global norm (f64) and the clipping factor;
//   - whether the loss and the norm are finite: if not, the update is
//     skipped, parameters stay as they were and the step says so;
//   - per parameter, the optimizer's update, in place: the parameter and
//     its moments (new arguments of the step, zero at the start of a run)
//     come back as results that the bufferization folds into their
//     arguments' buffers.
//
// The optimizer comes from the module's `sinter.optimizer` (the config's)
// unless the pass option says otherwise; its scalars (learning rate, step,
// decay, betas, ...) are read from the runtime at run time.
//
//===----------------------------------------------------------------------===//

#include "dialects/Sinter/IR/SinterAttrs.h"
#include "dialects/Train/IR/TrainOps.h"
#include "dialects/Train/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <limits>

using namespace mlir;

namespace sinter::train {
#define GEN_PASS_DEF_TRAINBUILDSTEP
#include "dialects/Train/Transforms/Passes.h.inc"

namespace {

/// The moments each optimizer keeps per parameter.
ArrayRef<StringRef> slotsOf(StringRef optimizer) {
  static const StringRef adamw[] = {"m", "v"}, momentum[] = {"m"};
  if (optimizer == "adamw")
    return adamw;
  if (optimizer == "sgd_momentum")
    return momentum;
  return {};
}

struct Param {
  StringAttr name;
  unsigned arg;      ///< the parameter's argument
  unsigned gradient; ///< its gradient's result
  SmallVector<unsigned> moments; ///< arguments, in slotsOf order
};

class StepUpdater {
public:
  StepUpdater(func::FuncOp f, StringRef optimizer)
      : func(f), optimizer(optimizer) {}

  LogicalResult run() {
    auto ret = cast<func::ReturnOp>(func.front().getTerminator());
    std::optional<unsigned> loss;
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      if (attrs::loss.getResult(func, i))
        loss = i;
      auto name = attrs::gradient.getResult(func, i);
      if (!name)
        continue;
      std::optional<unsigned> arg;
      for (unsigned a = 0; a < func.getNumArguments(); ++a)
        if (attrs::param.getArg(func, a) == name)
          arg = a;
      if (!arg)
        return func.emitError("internal error: the gradient of '")
               << name.getValue() << "' has no parameter argument";
      params.push_back({name, *arg, i, {}});
    }
    if (params.empty())
      return success();
    if (!loss)
      return func.emitError("internal error: a train step without a loss");
    addMoments();
    buildUpdate(ret, *loss);
    attrs::optimizer.set(func, StringAttr::get(func.getContext(), optimizer));
    return success();
  }

private:
  /// One new argument per parameter and moment, after the existing ones.
  void addMoments() {
    Builder b(func.getContext());
    for (Param &p : params) {
      Type type = func.getArgument(p.arg).getType();
      for (StringRef slot : slotsOf(optimizer)) {
        unsigned index = func.getNumArguments();
        NamedAttribute attrs[] = {
            attrs::optimizerState.named(p.name),
            attrs::slot.named(b.getStringAttr(slot))};
        (void)func.insertArgument(index, type, b.getDictionaryAttr(attrs),
                                  func.getLoc());
        p.moments.push_back(index);
      }
    }
  }

  /// The runtime's scalar `name`, read once per block.
  Value hyper(OpBuilder &b, StringRef name) {
    Value &v = hypers[{b.getInsertionBlock(), name}];
    if (!v)
      v = HyperparameterOp::create(b, func.getLoc(), b.getF64Type(),
                                   b.getStringAttr(name));
    return v;
  }

  Value f64(OpBuilder &b, double v) {
    return arith::ConstantOp::create(b, func.getLoc(), b.getF64FloatAttr(v));
  }

  /// |x| < inf: false for infinities and NaN.
  Value isFinite(OpBuilder &b, Value x) {
    Location loc = func.getLoc();
    Value abs = math::AbsFOp::create(b, loc, x);
    Value inf = f64(b, std::numeric_limits<double>::infinity());
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, abs, inf);
  }

  void buildUpdate(func::ReturnOp ret, unsigned lossResult) {
    OpBuilder b(ret);
    Location loc = func.getLoc();
    SmallVector<Value> grads;
    for (const Param &p : params)
      grads.push_back(ret.getOperand(p.gradient));
    Value norm = GlobalNormOp::create(b, loc, b.getF64Type(), grads);

    // The loss of this rank's micro-batches and the global gradients: when
    // either is not finite, nothing moves, and the runtime stops the run.
    Value loss = tensor::ExtractOp::create(b, loc, ret.getOperand(lossResult),
                                           ValueRange{});
    if (loss.getType() != b.getF64Type())
      loss = arith::ExtFOp::create(b, loc, b.getF64Type(), loss);
    Value finite = arith::AndIOp::create(b, loc, isFinite(b, loss),
                                         isFinite(b, norm));
    Value apply = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE,
                                        hyper(b, "apply"), f64(b, 0));
    Value ok = arith::AndIOp::create(b, loc, finite, apply);

    // torch.nn.utils.clip_grad_norm_: max / (norm + 1e-6), at most 1.
    Value maxNorm = hyper(b, "max_grad_norm");
    Value factor = arith::DivFOp::create(
        b, loc, maxNorm, arith::AddFOp::create(b, loc, norm, f64(b, 1e-6)));
    factor = arith::MinimumFOp::create(b, loc, factor, f64(b, 1.0));
    Value clips = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT,
                                        maxNorm, f64(b, 0));
    Value scale = arith::SelectOp::create(b, loc, clips, factor, f64(b, 1.0));

    // What the update writes: each parameter, then its moments.
    SmallVector<Value> old;
    for (const Param &p : params) {
      old.push_back(func.getArgument(p.arg));
      for (unsigned m : p.moments)
        old.push_back(func.getArgument(m));
    }
    auto ifOp = scf::IfOp::create(b, loc, ValueRange(old).getTypes(), ok,
                                  /*withElseRegion=*/true);
    {
      OpBuilder tb = ifOp.getThenBodyBuilder();
      SmallVector<Value> updated;
      for (const Param &p : params)
        updateOne(tb, p, ret.getOperand(p.gradient), scale, updated);
      scf::YieldOp::create(tb, loc, updated);
      OpBuilder eb = ifOp.getElseBodyBuilder();
      scf::YieldOp::create(eb, loc, old);
    }

    // The results: the step's norm and flag, then the in-place updates.
    SmallVector<Value> results(ret.getOperands());
    SmallVector<DictionaryAttr> attrs;
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      DictionaryAttr a = func.getResultAttrDict(i);
      attrs.push_back(a ? a : b.getDictionaryAttr({}));
    }
    auto scalar = [&](Value v) {
      return tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, v.getType()), v);
    };
    results.push_back(scalar(norm));
    attrs.push_back(b.getDictionaryAttr(
        attrs::gradNorm.named(b.getStringAttr("grad_norm"))));
    Value notFinite = arith::ExtUIOp::create(
        b, loc, b.getI32Type(),
        arith::XOrIOp::create(b, loc, finite,
                              arith::ConstantIntOp::create(b, loc, 1, 1)));
    results.push_back(scalar(notFinite));
    attrs.push_back(b.getDictionaryAttr(
        attrs::nonFinite.named(b.getStringAttr("non_finite"))));
    unsigned next = 0;
    for (const Param &p : params) {
      SmallVector<unsigned> args = {p.arg};
      args.append(p.moments.begin(), p.moments.end());
      for (unsigned a : args) {
        results.push_back(ifOp.getResult(next++));
        attrs.push_back(b.getDictionaryAttr(
            attrs::updates.named(b.getI64IntegerAttr(a))));
      }
    }
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    func.setFunctionType(FunctionType::get(
        func.getContext(), func.getArgumentTypes(), ValueRange(results).getTypes()));
    func.setAllResultAttrs(attrs);
  }

  /// One parameter's update; appends the new parameter and moments.
  void updateOne(OpBuilder &b, const Param &p, Value grad, Value scale,
                 SmallVectorImpl<Value> &updated) {
    Location loc = func.getLoc();
    Value param = func.getArgument(p.arg);
    // Weight decay applies to matrices and larger; parameters of one
    // dimension (biases, norms' scales) have their own rate.
    bool oneDim = cast<RankedTensorType>(param.getType()).getRank() <= 1;
    // Each scalar in its own statement: the IR reads in a fixed order.
    Value lr = hyper(b, "lr");
    Value decay = hyper(b, oneDim ? "weight_decay_1d" : "weight_decay");
    if (optimizer == "adamw") {
      Value beta1 = hyper(b, "beta1");
      Value beta2 = hyper(b, "beta2");
      Value eps = hyper(b, "eps");
      Value step = hyper(b, "step");
      auto op = AdamWUpdateOp::create(b, loc, param, grad,
                                      func.getArgument(p.moments[0]),
                                      func.getArgument(p.moments[1]), lr, decay,
                                      beta1, beta2, eps, step, scale);
      updated.append(op->result_begin(), op->result_end());
      return;
    }
    Value buffer = p.moments.empty() ? Value() : func.getArgument(p.moments[0]);
    Value momentum = hyper(b, "momentum");
    Value nesterov = hyper(b, "nesterov");
    auto op = SGDUpdateOp::create(b, loc, param, grad, buffer, lr, decay,
                                  momentum, nesterov, scale);
    updated.append(op->result_begin(), op->result_end());
  }

  func::FuncOp func;
  StringRef optimizer;
  SmallVector<Param> params;
  DenseMap<std::pair<Block *, StringRef>, Value> hypers;
};

struct TrainBuildStep : public impl::TrainBuildStepBase<TrainBuildStep> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string chosen = optimizer;
    if (auto fromConfig = attrs::optimizer.get(module);
        fromConfig && optimizer.getNumOccurrences() == 0)
      chosen = fromConfig.str();
    if (chosen != "adamw" && chosen != "sgd" && chosen != "sgd_momentum") {
      module.emitError("unknown optimizer '")
          << chosen << "'; expected adamw, sgd or sgd_momentum";
      return signalPassFailure();
    }
    for (auto f : module.getOps<func::FuncOp>()) {
      auto phase = attrs::phase.get(f);
      if (!phase || phase != "train" || f.isExternal())
        continue;
      if (failed(StepUpdater(f, chosen).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace sinter::train
