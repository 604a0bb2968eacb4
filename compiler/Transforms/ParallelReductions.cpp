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

/// Whether `op`'s loops are reductions first, then parallel loops that
/// index its one result in order: out[p...] = sum over r... of f(r..., p...).
bool isColumnReduction(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumResults() != 1)
    return false;
  unsigned reductions = op.getNumReductionLoops(), loops = op.getNumLoops();
  if (reductions == 0 || reductions == loops)
    return false;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned i = 0; i < loops; ++i)
    if ((iterators[i] == utils::IteratorType::parallel) != (i >= reductions))
      return false;
  AffineMap out = op.getIndexingMapsArray().back();
  if (out.getNumResults() != loops - reductions)
    return false;
  for (unsigned i = 0; i < out.getNumResults(); ++i)
    if (out.getResult(i) != getAffineDimExpr(reductions + i, op.getContext()))
      return false;
  return true;
}

/// out = combine(out, f(inputs)) over its reductions, with a scalar result
/// or (a column reduction) one indexed by its trailing parallel loops: a
/// partial result per iteration of the outermost loop, then their
/// combination into `out`. Returns the partial op, whose loops keep their
/// order.
linalg::GenericOp splitReduction(linalg::GenericOp op, int64_t minRows,
                                 bool columns, RewriterBase &rewriter) {
  if (op.getNumDpsInits() != 1 || op.getNumResults() != 1 || op.getNumLoops() == 0)
    return {};
  auto resultType = dyn_cast<RankedTensorType>(op.getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape())
    return {};
  bool scalar = op.getNumParallelLoops() == 0 && resultType.getRank() == 0;
  if (!scalar && !(columns && isColumnReduction(op)))
    return {};
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[0]) || ranges[0] < minRows)
    return {};
  // Each partial result sums at least min-rows values: a partial row per
  // row of a matrix would be as large as the matrix.
  int64_t inner = 1;
  for (unsigned d = 1; d < op.getNumReductionLoops(); ++d)
    inner *= ranges[d];
  if (!scalar && inner < minRows)
    return {};
  Block &body = op.getRegion().front();
  BlockArgument acc = body.getArguments().back();
  Operation *combiner = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!combiner || combiner->getNumOperands() != 2 || !acc.hasOneUse() ||
      acc.getUses().begin()->getOwner() != combiner)
    return {};
  Type et = resultType.getElementType();
  std::optional<TypedAttr> identity = identityOf(combiner, et, rewriter);
  if (!identity)
    return {};

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  MLIRContext *ctx = op.getContext();
  int64_t rank = op.getNumLoops();
  // The partial results: [rows] + the result's shape.
  SmallVector<int64_t> partialShape = {ranges[0]};
  llvm::append_range(partialShape, resultType.getShape());
  auto partialType = RankedTensorType::get(partialShape, et);
  Value init = linalg::FillOp::create(
                   rewriter, loc,
                   ValueRange{arith::ConstantOp::create(rewriter, loc, *identity)},
                   ValueRange{tensor::EmptyOp::create(rewriter, loc,
                                                      partialType.getShape(), et)})
                   .getResult(0);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<AffineExpr> partialIndex = {getAffineDimExpr(0, ctx)};
  llvm::append_range(partialIndex, maps.back().getResults());
  maps.back() = AffineMap::get(rank, 0, partialIndex, ctx);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators[0] = utils::IteratorType::parallel;
  auto partial = linalg::GenericOp::create(rewriter, loc, TypeRange{partialType},
                                           op.getDpsInputs(), ValueRange{init},
                                           maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), partial.getRegion(),
                              partial.getRegion().end());

  // total[p...] = combine over rows of partial[row, p...].
  int64_t kept = resultType.getRank();
  AffineMap rows = AffineMap::getMultiDimIdentityMap(kept + 1, ctx);
  AffineMap result = AffineMap::get(
      kept + 1, 0,
      llvm::map_to_vector(llvm::seq<int64_t>(1, kept + 1),
                          [&](int64_t d) { return getAffineDimExpr(d, ctx); }),
      ctx);
  SmallVector<utils::IteratorType> totalIterators(kept + 1, utils::IteratorType::parallel);
  totalIterators[0] = utils::IteratorType::reduction;
  auto total = linalg::GenericOp::create(
      rewriter, loc, TypeRange{resultType}, ValueRange{partial.getResult(0)},
      op.getDpsInits(), ArrayRef<AffineMap>{rows, result}, totalIterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping map;
        Operation *combined = b.clone(*combiner, map);
        combined->setOperands(ValueRange{args[1], args[0]});
        linalg::YieldOp::create(b, l, combined->getResult(0));
      });
  rewriter.replaceOp(op, total.getResults());
  parallelLoopsFirst(total, rewriter);
  return partial;
}

struct ParallelReductions : public impl::ParallelReductionsBase<ParallelReductions> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp op) { generics.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : generics) {
      // A column reduction split keeps its partial op's loop order.
      if (splitColumns && isColumnReduction(op) &&
          splitReduction(op, minRows, /*columns=*/true, rewriter))
        continue;
      parallelLoopsFirst(op, rewriter);
      splitReduction(op, minRows, /*columns=*/false, rewriter);
    }
  }
};

} // namespace
} // namespace sinter
