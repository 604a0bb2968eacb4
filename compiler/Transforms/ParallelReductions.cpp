//===- ParallelReductions.cpp - Reductions shaped for parallel loops ------===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_PARALLELREDUCTIONS
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// Parallel loops first, in their order, then the reductions.
void parallelLoopsFirst(linalg::GenericOp op, RewriterBase &rewriter) {
  SmallVector<unsigned> order;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::parallel)
      order.push_back(unsigned(i));
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it != utils::IteratorType::parallel)
      order.push_back(unsigned(i));
  if (llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
    return;
  rewriter.setInsertionPoint(op);
  (void)linalg::interchangeGenericOp(rewriter, op, order);
}

/// The identity of the combiner `op` of element type `type`, if it is a
/// sum, a maximum or a minimum.
std::optional<TypedAttr> identityOf(Operation *op, Type type, Builder &b) {
  if (auto ft = dyn_cast<FloatType>(type)) {
    double inf = std::numeric_limits<double>::infinity();
    if (isa<arith::AddFOp>(op))
      return b.getFloatAttr(ft, 0.0);
    if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
      return b.getFloatAttr(ft, -inf);
    if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
      return b.getFloatAttr(ft, inf);
    return std::nullopt;
  }
  auto it = dyn_cast<IntegerType>(type);
  if (!it)
    return std::nullopt;
  unsigned w = it.getWidth();
  if (isa<arith::AddIOp>(op))
    return b.getIntegerAttr(it, 0);
  if (isa<arith::MaxSIOp>(op))
    return b.getIntegerAttr(it, APInt::getSignedMinValue(w));
  if (isa<arith::MinSIOp>(op))
    return b.getIntegerAttr(it, APInt::getSignedMaxValue(w));
  return std::nullopt;
}

/// out = combine(out, f(inputs)) over every loop, with a scalar result:
/// a vector of partial results over the outermost loop, then their
/// combination into `out`.
void splitScalarReduction(linalg::GenericOp op, int64_t minRows,
                          RewriterBase &rewriter) {
  if (op.getNumDpsInits() != 1 || op.getNumResults() != 1 ||
      op.getNumParallelLoops() != 0 || op.getNumLoops() == 0)
    return;
  auto resultType = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  if (!resultType || resultType.getRank() != 0)
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[0]) || ranges[0] < minRows)
    return;
  Block &body = op.getRegion().front();
  BlockArgument acc = body.getArguments().back();
  Operation *combiner = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!combiner || combiner->getNumOperands() != 2 || !acc.hasOneUse() ||
      acc.getUses().begin()->getOwner() != combiner)
    return;
  Type et = resultType.getElementType();
  std::optional<TypedAttr> identity = identityOf(combiner, et, rewriter);
  if (!identity)
    return;

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  MLIRContext *ctx = op.getContext();
  int64_t rank = op.getNumLoops();
  auto partialType = RankedTensorType::get({ranges[0]}, et);
  Value init = linalg::FillOp::create(
                   rewriter, loc,
                   ValueRange{arith::ConstantOp::create(rewriter, loc, *identity)},
                   ValueRange{tensor::EmptyOp::create(rewriter, loc,
                                                      partialType.getShape(), et)})
                   .getResult(0);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.back() = AffineMap::get(rank, 0, {getAffineDimExpr(0, ctx)}, ctx);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators[0] = utils::IteratorType::parallel;
  auto partial = linalg::GenericOp::create(rewriter, loc, TypeRange{partialType},
                                           op.getDpsInputs(), ValueRange{init},
                                           maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), partial.getRegion(),
                              partial.getRegion().end());

  AffineMap row = AffineMap::get(1, 0, {getAffineDimExpr(0, ctx)}, ctx);
  AffineMap scalar = AffineMap::get(1, 0, {}, ctx);
  auto total = linalg::GenericOp::create(
      rewriter, loc, TypeRange{resultType}, ValueRange{partial.getResult(0)},
      op.getDpsInits(), ArrayRef<AffineMap>{row, scalar},
      ArrayRef<utils::IteratorType>{utils::IteratorType::reduction},
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping map;
        Operation *combined = b.clone(*combiner, map);
        combined->setOperands(ValueRange{args[1], args[0]});
        linalg::YieldOp::create(b, l, combined->getResult(0));
      });
  rewriter.replaceOp(op, total.getResults());
}

struct ParallelReductions : public impl::ParallelReductionsBase<ParallelReductions> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      parallelLoopsFirst(op, rewriter);
      splitScalarReduction(op, minRows, rewriter);
    }
  }
};

} // namespace
} // namespace sinter
