//===- OnlineSoftmax.cpp - A softmax's row statistics in one pass ---------===//
//
// Cross-entropy over GPT-2's vocabulary reads its 16 x 1024 x 50,257
// logits (3.3 GB in f32) once for each row's maximum m and again for each
// row's sum of exp(x - m). Both come from one pass when the sum follows
// the maximum as it grows: on a larger x, the sum so far is rescaled by
// exp(m_old - m_new). The maximum is the same value; the sum is the same
// up to rounding.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/OnlineSoftmax.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_ONLINESOFTMAX
#include "compiler/Transforms/Passes.h.inc"


Value expOfDifference(OpBuilder &b, Location loc, Value a, Value max) {
  auto type = cast<FloatType>(a.getType());
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type, -std::numeric_limits<double>::infinity()));
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0));
  Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a, negInf);
  Value e = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, a, max));
  return arith::SelectOp::create(b, loc, none, zero, e);
}

Value rescaledSum(OpBuilder &b, Location loc, Value sum, Value m, Value max) {
  Value scale = expOfDifference(b, loc, m, max);
  if (scale.getType() != sum.getType())
    scale = arith::ExtFOp::create(b, loc, sum.getType(), scale);
  return arith::MulFOp::create(b, loc, sum, scale);
}

namespace {

/// The running sum of exp(. - m) with x added, at the running maximum
/// max(m, x), with one exponential: exp(-|x - m|) is exp(x - m) when x does
/// not raise the maximum, and the rescaling exp(m - x) when it does, the
/// new x then adding exp(0) = 1.
Value addToRunningSum(OpBuilder &b, Location loc, Value x, Value m, Value sum) {
  auto type = cast<FloatType>(x.getType());
  Value difference = arith::SubFOp::create(b, loc, x, m);
  Value raises =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, difference,
                            arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0)));
  Value e = math::ExpOp::create(
      b, loc, arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, difference)));
  // x = -inf adds nothing (with m = -inf too, the difference is NaN).
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type, -std::numeric_limits<double>::infinity()));
  Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, negInf);
  e = arith::SelectOp::create(
      b, loc, none, arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 0.0)), e);
  if (e.getType() != sum.getType())
    e = arith::ExtFOp::create(b, loc, sum.getType(), e);
  Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(sum.getType(), 1.0));
  Value rescaled =
      arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, sum, e), one);
  Value added = arith::AddFOp::create(b, loc, sum, e);
  return arith::SelectOp::create(b, loc, raises, rescaled, added);
}

/// A row maximum and the sum of exp(x - maximum) over the same rows.
struct Statistics {
  linalg::GenericOp max, sum;
  OpOperand *x;       // the sum's x (the maximum reads the same)
  Operation *maxFold; // the maximum's combiner
};

/// The block argument `v` is, if it is one of `op`'s.
std::optional<unsigned> argumentOf(linalg::GenericOp op, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner() != &op.getRegion().front())
    return std::nullopt;
  return arg.getArgNumber();
}

/// `sum` as sum(exp(x - m)) [extended] with m a row maximum of the same x.
std::optional<Statistics> statisticsOf(linalg::GenericOp sum) {
  if (!sum.hasPureTensorSemantics() || sum.getNumDpsInputs() != 2 ||
      sum.getNumDpsInits() != 1 || sum.getNumReductionLoops() == 0 ||
      llvm::any_of(sum.getStaticLoopRanges(), ShapedType::isDynamic))
    return std::nullopt;
  Block &body = sum.getRegion().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  if (ops.size() != 3 && ops.size() != 4)
    return std::nullopt;
  auto sub = dyn_cast<arith::SubFOp>(ops[0]);
  auto exp = dyn_cast<math::ExpOp>(ops[1]);
  bool extends = ops.size() == 4;
  auto add = dyn_cast<arith::AddFOp>(ops.back());
  if (!sub || !exp || !add || exp.getOperand() != sub ||
      (extends && (!isa<arith::ExtFOp>(ops[2]) || ops[2]->getOperand(0) != exp)) ||
      body.getTerminator()->getOperand(0) != add.getResult())
    return std::nullopt;
  Value summand = ops[ops.size() - 2]->getResult(0);
  Value acc = body.getArgument(2);
  if (!((add.getLhs() == acc && add.getRhs() == summand) ||
        (add.getRhs() == acc && add.getLhs() == summand)))
    return std::nullopt;
  std::optional<unsigned> xArg = argumentOf(sum, sub.getLhs());
  std::optional<unsigned> mArg = argumentOf(sum, sub.getRhs());
  if (!xArg || !mArg || *xArg == *mArg || *xArg > 1 || *mArg > 1)
    return std::nullopt;
  // The pair starts from the maximum's start and a sum of 0: a sum that
  // starts elsewhere would be rescaled with the rest.
  auto zeros = sum.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!zeros || !matchPattern(zeros.getInputs()[0], m_AnyZeroFloat()))
    return std::nullopt;
  OpOperand *x = sum.getDpsInputOperand(*xArg);
  OpOperand *m = sum.getDpsInputOperand(*mArg);
  AffineMap rowMap = sum.getMatchingIndexingMap(sum.getDpsInitOperand(0));
  if (sum.getMatchingIndexingMap(m) != rowMap)
    return std::nullopt;

  auto max = m->get().getDefiningOp<linalg::GenericOp>();
  if (!max || !max.hasPureTensorSemantics() || max.getNumDpsInputs() != 1 ||
      max.getNumDpsInits() != 1 || max->getBlock() != sum->getBlock() ||
      max.getIteratorTypesArray() != sum.getIteratorTypesArray() ||
      max.getStaticLoopRanges() != sum.getStaticLoopRanges() ||
      max.getDpsInputs()[0] != x->get() ||
      max.getMatchingIndexingMap(max.getDpsInputOperand(0)) !=
          sum.getMatchingIndexingMap(x) ||
      max.getMatchingIndexingMap(max.getDpsInitOperand(0)) != rowMap)
    return std::nullopt;
  Block &maxBody = max.getRegion().front();
  Operation *fold = maxBody.getTerminator()->getOperand(0).getDefiningOp();
  if (!fold || !isa<arith::MaximumFOp, arith::MaxNumFOp>(fold) ||
      !llvm::hasSingleElement(maxBody.without_terminator()) ||
      !llvm::is_contained(fold->getOperands(), maxBody.getArgument(0)) ||
      !llvm::is_contained(fold->getOperands(), maxBody.getArgument(1)))
    return std::nullopt;
  return Statistics{max, sum, x, fold};
}

/// Where the merged generic can go: the maximum's place when the sum's
/// accumulator is there already, else the sum's when nothing but the sum
/// reads the maximum before it.
Operation *placeFor(Statistics s, DominanceInfo &dominance) {
  if (dominance.properlyDominates(s.sum.getDpsInits()[0], s.max))
    return s.max;
  for (Operation *user : s.max->getUsers()) {
    Operation *here = s.sum->getBlock()->findAncestorOpInBlock(*user);
    if (user != s.sum && (!here || !s.sum->isBeforeInBlock(here)))
      return nullptr;
  }
  return s.sum;
}

void mergeStatistics(Statistics s, Operation *place, RewriterBase &rewriter) {
  Location loc = s.sum.getLoc();
  rewriter.setInsertionPoint(place);
  Value mInit = s.max.getDpsInits()[0];
  Value sInit = s.sum.getDpsInits()[0];
  AffineMap rowMap = s.sum.getMatchingIndexingMap(s.sum.getDpsInitOperand(0));
  Operation *maxFold = s.maxFold;
  auto merged = linalg::GenericOp::create(
      rewriter, loc, TypeRange{mInit.getType(), sInit.getType()}, ValueRange{s.x->get()},
      ValueRange{mInit, sInit},
      ArrayRef<AffineMap>{s.sum.getMatchingIndexingMap(s.x), rowMap, rowMap},
      s.sum.getIteratorTypesArray(), [&](OpBuilder &b, Location l, ValueRange args) {
        Value x = args[0], m = args[1], sum = args[2];
        Operation *grown = b.clone(*maxFold);
        grown->setOperands(ValueRange{m, x});
        Value max = grown->getResult(0);
        linalg::YieldOp::create(b, l, ValueRange{max, addToRunningSum(b, l, x, m, sum)});
      });
  attrs::onlineSoftmax.set(merged, rewriter.getUnitAttr());
  rewriter.replaceOp(s.max, merged.getResult(0));
  rewriter.replaceOp(s.sum, merged.getResult(1));
}

struct OnlineSoftmax : public impl::OnlineSoftmaxBase<OnlineSoftmax> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> sums;
    getOperation().walk([&](linalg::GenericOp op) { sums.push_back(op); });
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(getOperation());
    for (linalg::GenericOp sum : sums) {
      std::optional<Statistics> s = statisticsOf(sum);
      if (!s)
        continue;
      if (Operation *place = placeFor(*s, dominance))
        mergeStatistics(*s, place, rewriter);
    }
  }
};

} // namespace
} // namespace sinter
