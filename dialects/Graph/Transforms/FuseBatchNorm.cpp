//===- FuseBatchNorm.cpp - Spelled-out batch-norm as graph.batch_norm -----===//
//
// std/nn.sn's batch_norm in training, `(x - mean) * (weight * rsqrt(var +
// eps)) + bias` with the per-channel views of `graph.batch_norm_stats` over
// every axis but the channels, is `graph.batch_norm` where the device's
// library normalizes a batch whole (cuDNN on CUDA). Autodiff then
// differentiates it whole, and the library computes the gradients in one
// call instead of the graph's reductions and maps. Without `weight` the
// scale is the rsqrt alone; without `bias` the product is the result.
// Statistics synchronized over ranks (parallel { batch_norm: SYNC }) are no
// longer `graph.batch_norm_stats` by the time this runs, so they stay
// spelled out.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"

#include <limits>

using namespace mlir;

namespace sinter::graph {
#define GEN_PASS_DEF_GRAPHFUSEBATCHNORM
#include "dialects/Graph/Transforms/Passes.h.inc"

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// The operand of the binary `op` that is not `known`, or null when
/// `known` is neither (or both) of its operands.
Value otherOperand(Operation *op, Value known) {
  if (op->getNumOperands() != 2 || op->getOperand(0) == op->getOperand(1))
    return Value();
  if (op->getOperand(0) == known)
    return op->getOperand(1);
  if (op->getOperand(1) == known)
    return op->getOperand(0);
  return Value();
}

/// `v` is `reshape(c)` of a [C] tensor `c` to the channel view of `x`
/// ([1, C, 1, ...]); returns `c`.
Value channelsOf(Value v, RankedTensorType x) {
  auto r = v.getDefiningOp<ReshapeOp>();
  if (!r)
    return Value();
  Value c = r.getInput();
  RankedTensorType ct = typeOf(c), vt = typeOf(r.getResult());
  if (ct.getRank() != 1 || ct.getDimSize(0) != x.getDimSize(1) ||
      vt.getRank() != x.getRank() || ct.getElementType() != x.getElementType())
    return Value();
  for (int64_t i = 0; i < vt.getRank(); ++i)
    if (vt.getDimSize(i) != (i == 1 ? x.getDimSize(1) : 1))
      return Value();
  return c;
}

/// The only user of `v` when it has exactly one, of type OpT.
template <typename OpT> OpT onlyUser(Value v) {
  return v.hasOneUse() ? dyn_cast<OpT>(*v.getUsers().begin()) : OpT();
}

/// What the spelled-out form reads: the scale is `weight * rsqrt(var +
/// eps)` or `rsqrt(var + eps)`.
struct Scale {
  Value weight; // null: no weight
  double epsilon = 0;
};

std::optional<Scale> matchScale(Value scale, Value var) {
  Scale s;
  auto rsqrt = scale.getDefiningOp<RsqrtOp>();
  if (!rsqrt) {
    auto mul = scale.getDefiningOp<MulOp>();
    if (!mul)
      return std::nullopt;
    for (int i = 0; i < 2 && !rsqrt; ++i)
      if ((rsqrt = mul->getOperand(i).getDefiningOp<RsqrtOp>()))
        s.weight = mul->getOperand(1 - i);
    if (!rsqrt || typeOf(s.weight) != typeOf(var))
      return std::nullopt;
  }
  auto add = rsqrt.getInput().getDefiningOp<AddOp>();
  Value eps = add ? otherOperand(add, var) : Value();
  std::optional<double> e = eps ? splatFloat(eps) : std::nullopt;
  // cuDNN's batch-norm takes an epsilon of at least CUDNN_BN_MIN_EPSILON (0).
  if (!e || !(*e >= 0) || typeOf(eps).getNumElements() != 1)
    return std::nullopt;
  s.epsilon = *e;
  return s;
}

/// Whether `stats` is over every axis of its input but the channels (1),
/// of static f32 shape with at least two values per channel and fewer than
/// 2^31 in all.
bool isPerChannel(BatchNormStatsOp stats) {
  RankedTensorType x = typeOf(stats.getInput());
  int64_t rank = x.getRank();
  if (rank < 2 || !x.hasStaticShape() || !x.getElementType().isF32())
    return false;
  SmallVector<bool> reduced(rank, false);
  for (int64_t a : stats.getAxes()) {
    int64_t axis = a < 0 ? a + rank : a;
    if (axis < 0 || axis >= rank || reduced[axis])
      return false;
    reduced[axis] = true;
  }
  int64_t count = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (reduced[i] != (i != 1))
      return false;
    if (i != 1)
      count *= x.getDimSize(i);
  }
  // cuDNN's tensor descriptors count elements in int.
  return count >= 2 && x.getNumElements() <= std::numeric_limits<int32_t>::max();
}

/// Erases `ops` and what they alone read, once nothing reads them: the
/// spelled-out normalization a fused op replaced. Declarations (params,
/// states, inputs) stay.
void eraseDead(SmallVector<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 16> erased;
  while (!ops.empty()) {
    Operation *op = ops.pop_back_val();
    if (!op || erased.contains(op) || !op->use_empty() || !isPure(op) ||
        isa<ParamOp, StateOp, InputOp>(op))
      continue;
    for (Value operand : op->getOperands())
      ops.push_back(operand.getDefiningOp());
    erased.insert(op);
    op->erase();
  }
}

/// The normalization of `stats`' input with its statistics, fused: the op
/// goes right after the statistics and gives their readers (the running
/// statistics' update) its mean and variance. A second normalization with
/// the same statistics stays spelled out, reading them.
void fuse(BatchNormStatsOp stats, DominanceInfo &dominance) {
  Value x = stats.getInput(), mean = stats.getMean(), var = stats.getVar();
  RankedTensorType xt = typeOf(x);
  auto before = [&](Value v) { return dominance.properlyDominates(v, stats); };
  for (Operation *view : mean.getUsers()) {
    auto reshape = dyn_cast<ReshapeOp>(view);
    if (!reshape || !channelsOf(reshape.getResult(), xt))
      continue;
    auto centered = onlyUser<SubOp>(reshape.getResult());
    if (!centered || centered.getLhs() != x || centered.getRhs() != reshape.getResult())
      continue;
    auto scaled = onlyUser<MulOp>(centered.getResult());
    Value scaleView = scaled ? otherOperand(scaled, centered.getResult()) : Value();
    Value scale = scaleView ? channelsOf(scaleView, xt) : Value();
    std::optional<Scale> s = scale ? matchScale(scale, var) : std::nullopt;
    if (!s || (s->weight && !before(s->weight)))
      continue;
    Value result = scaled.getResult(), bias;
    if (auto shifted = onlyUser<AddOp>(result)) {
      Value biasView = otherOperand(shifted, result);
      bias = biasView ? channelsOf(biasView, xt) : Value();
      if (bias && !before(bias))
        continue;
      if (bias)
        result = shifted.getResult();
    }
    OpBuilder b(stats->getContext());
    b.setInsertionPointAfter(stats);
    Location loc = stats.getLoc();
    Operation *spelled = result.getDefiningOp();
    auto channels = typeOf(mean);
    auto constant = [&](double v) -> Value {
      return ConstantOp::create(
          b, loc, DenseElementsAttr::get(channels, b.getFloatAttr(b.getF32Type(), v)));
    };
    Value weight = s->weight ? s->weight : constant(1.0);
    if (!bias)
      bias = constant(0.0);
    auto fused = BatchNormOp::create(b, loc, TypeRange{xt, channels, channels}, x, weight,
                                     bias, b.getF64FloatAttr(s->epsilon));
    result.replaceAllUsesWith(fused.getResult());
    mean.replaceAllUsesWith(fused.getMean());
    var.replaceAllUsesWith(fused.getVar());
    eraseDead({spelled, stats});
    return;
  }
}

struct GraphFuseBatchNorm : public impl::GraphFuseBatchNormBase<GraphFuseBatchNorm> {
  void runOnOperation() override {
    SmallVector<BatchNormStatsOp> stats;
    getOperation().walk([&](BatchNormStatsOp op) {
      if (attrs::fusesBatchNorm(op) && isPerChannel(op))
        stats.push_back(op);
    });
    DominanceInfo dominance(getOperation());
    for (BatchNormStatsOp op : stats)
      fuse(op, dominance);
  }
};

} // namespace
} // namespace sinter::graph
