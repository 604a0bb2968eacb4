//===- NormalizeLoss.cpp - A micro-batch's exact share of the loss --------===//
//
// The loss of a step is defined over the global batch (LANGUAGE.md 9). A
// micro-batch sees b of its G samples, so each term of the loss is rewritten
// into the part that this micro-batch contributes; the step adds those parts
// over its micro-batches (and ranks) and gets the global value exactly, with
// no averaging of averages (DOMAIN.md 2).
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Train/IR/TrainOps.h"
#include "dialects/Train/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::train {
#define GEN_PASS_DEF_TRAINNORMALIZELOSS
#include "dialects/Train/Transforms/Passes.h.inc"

namespace {

const char *const kRule =
    "the loss must be a sum of terms c * L (LANGUAGE.md 9), with c a constant "
    "or a scalar state and L a mean or a sum over the batch; ";

const char *const kNormalized = "train.loss_normalized";

/// How a term adds up over the micro-batches of a step.
enum class TermKind {
  SampleMean, ///< a mean over samples: scale by b / G
  TokenMean,  ///< a mean over valid targets: sum / global count
  Sum,        ///< a sum over samples: as it is
  BatchFree,  ///< depends on no input: scale by b / G, counted once
};

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

bool isScalar(Value v) { return typeOf(v).getNumElements() == 1; }

/// Whether a reduction reduces every axis of its input.
template <typename ReduceOp> bool reducesEverything(ReduceOp op) {
  int64_t rank = typeOf(op.getInput()).getRank();
  return op.getAxes().empty() || int64_t(op.getAxes().size()) == rank;
}

class LossNormalizer {
public:
  explicit LossNormalizer(ModelOp model) : model(model) {
    for (Operation &op : *model.getBody()) {
      bool input = isa<InputOp>(op), param = isa<ParamOp>(op), mixes = false;
      for (Value operand : op.getOperands()) {
        input |= onInput.contains(operand);
        param |= onParam.contains(operand);
        mixes |= mixed.contains(operand);
      }
      mixes |= input && combinesSamples(&op);
      for (Value r : op.getResults()) {
        if (input)
          onInput.insert(r);
        if (param)
          onParam.insert(r);
        if (mixes)
          mixed.insert(r);
      }
    }
  }

  LogicalResult run(LossOp loss) {
    if (failed(visit(loss.getValue())))
      return failure();
    for (auto [term, kind] : terms)
      rewrite(term, kind);
    return success();
  }

private:
  /// Records the terms under `v`, a value the loss depends on linearly.
  LogicalResult visit(Value v) {
    if (!onInput.contains(v))
      return record(v, TermKind::BatchFree);
    Operation *op = v.getDefiningOp();
    expression.insert(op);
    return TypeSwitch<Operation *, LogicalResult>(op)
        .Case<AddOp, SubOp>([&](auto o) {
          if (failed(visit(o.getLhs())))
            return failure();
          return visit(o.getRhs());
        })
        .Case<NegOp>([&](NegOp o) { return visit(o.getInput()); })
        .Case<ReshapeOp, CastOp>([&](auto o) {
          if (!isa<FloatType>(typeOf(o.getInput()).getElementType()))
            return fail(op, "a term must be a floating-point reduction");
          return visit(o.getInput());
        })
        .Case<MulOp>([&](MulOp o) {
          if (isCoefficient(o.getLhs()))
            return visit(o.getRhs());
          if (isCoefficient(o.getRhs()))
            return visit(o.getLhs());
          return fail(op, "this product multiplies two values that depend on "
                          "the batch or on a parameter");
        })
        .Case<DivOp>([&](DivOp o) {
          if (isCoefficient(o.getRhs()))
            return visit(o.getLhs());
          return fail(op, "this quotient divides by a value that depends on "
                          "the batch or on a parameter");
        })
        .Case<CrossEntropyOp, NllLossOp>([&](auto o) {
          if (o.getReduction() == "sum")
            return recordReduction(v, TermKind::Sum);
          return recordReduction(v, o.getIgnoreIndex() ? TermKind::TokenMean
                                                       : TermKind::SampleMean);
        })
        .Case<MseLossOp, L1LossOp, BceWithLogitsOp>([&](auto o) {
          return recordReduction(v, o.getReduction() == "sum"
                                        ? TermKind::Sum
                                        : TermKind::SampleMean);
        })
        .Case<ReduceMeanOp>([&](ReduceMeanOp o) {
          if (!reducesEverything(o))
            return fail(op, "this mean keeps some axes, so it is not a mean "
                            "over the batch");
          return recordReduction(v, TermKind::SampleMean);
        })
        .Case<ReduceSumOp>([&](ReduceSumOp o) {
          if (!reducesEverything(o))
            return fail(op, "this sum keeps some axes, so it is not a sum "
                            "over the batch");
          return recordReduction(v, TermKind::Sum);
        })
        .Default([&](Operation *) {
          return fail(op, "'" + op->getName().getStringRef().str() +
                              "' of a batch reduction is not such a term, so "
                              "the step over micro-batches could not equal "
                              "the step over the global batch");
        });
  }

  /// Whether `op` reduces over the batch axis (axis 0). Batch-norm's
  /// statistics do too, but are the documented exception (DOMAIN.md 4).
  static bool combinesSamples(Operation *op) {
    auto overBatch = [](auto r) {
      return r.getAxes().empty() || llvm::is_contained(r.getAxes(), 0);
    };
    return TypeSwitch<Operation *, bool>(op)
        .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp>(overBatch)
        .Case<CrossEntropyOp, NllLossOp, MseLossOp, L1LossOp, BceWithLogitsOp>(
            [](auto l) { return l.getReduction() != "none"; })
        .Default([](Operation *) { return false; });
  }

  /// A batch reduction must reduce per-sample values: none of its operands
  /// may already combine samples.
  LogicalResult recordReduction(Value v, TermKind kind) {
    Operation *op = v.getDefiningOp();
    for (Value operand : op->getOperands())
      if (mixed.contains(operand))
        return fail(op, "this reduction's operand already combines the "
                        "samples of the batch, so the term is not a mean or "
                        "a sum over samples");
    return record(v, kind);
  }

  /// A factor allowed in `c * L`: a scalar from constants and states only.
  bool isCoefficient(Value v) const {
    return isScalar(v) && !onInput.contains(v) && !onParam.contains(v);
  }

  LogicalResult record(Value term, TermKind kind) {
    terms.insert({term, kind});
    return success();
  }

  LogicalResult fail(Operation *op, const std::string &why) {
    op->emitError() << kRule << why;
    return failure();
  }

  /// Replaces `term` by its share, in the loss expression only: a metric
  /// that reads the same value keeps the micro-batch's own.
  void rewrite(Value term, TermKind kind) {
    if (kind == TermKind::Sum)
      return;
    Operation *def = term.getDefiningOp();
    Location loc = def ? def->getLoc() : model.getLoc();
    OpBuilder b(model.getContext());
    if (def)
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(model.getBody());
    Value share;
    if (kind == TermKind::TokenMean) {
      share = tokenMeanShare(b, loc, def);
    } else {
      Value fraction = SampleFractionOp::create(
          b, loc, RankedTensorType::get({}, typeOf(term).getElementType()));
      share = MulOp::create(b, loc, term, fraction);
    }
    term.replaceUsesWithIf(share, [&](OpOperand &use) {
      return isa<LossOp>(use.getOwner()) || expression.contains(use.getOwner());
    });
  }

  /// sum over this micro-batch's valid targets / count over the global batch.
  Value tokenMeanShare(OpBuilder &b, Location loc, Operation *mean) {
    Operation *sum = b.clone(*mean);
    sum->setAttr("reduction", b.getStringAttr("sum"));
    Value target = mean->getOperand(1);
    auto ignore = mean->getAttrOfType<IntegerAttr>("ignore_index");
    Type targetElement = typeOf(target).getElementType();
    auto scalarType = RankedTensorType::get({}, targetElement);
    Value ignored = ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(
            scalarType, b.getIntegerAttr(targetElement, ignore.getInt())));
    Value valid = CompareOp::create(b, loc, target, ignored, "ne");
    Value count = GlobalCountOp::create(
        b, loc,
        RankedTensorType::get({}, typeOf(sum->getResult(0)).getElementType()),
        valid);
    return DivOp::create(b, loc, sum->getResult(0), count);
  }

  ModelOp model;
  DenseSet<Value> onInput, onParam;
  /// Values computed from a reduction over the batch axis.
  DenseSet<Value> mixed;
  llvm::SetVector<Operation *> expression;
  llvm::MapVector<Value, TermKind> terms;
};

struct TrainNormalizeLoss
    : public impl::TrainNormalizeLossBase<TrainNormalizeLoss> {
  void runOnOperation() override {
    for (ModelOp model : getOperation().getOps<ModelOp>()) {
      // Once per model: a normalized loss divides by global counts, which
      // the rule would reject.
      if (model.getPhase() != "train" || model->hasAttr(kNormalized))
        continue;
      for (LossOp loss : model.getBody()->getOps<LossOp>())
        if (failed(LossNormalizer(model).run(loss)))
          return signalPassFailure();
      model->setAttr(kNormalized, UnitAttr::get(model.getContext()));
    }
  }
};

} // namespace
} // namespace sinter::train
