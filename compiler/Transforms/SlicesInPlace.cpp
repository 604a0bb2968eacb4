//===- SlicesInPlace.cpp - Pieces computed where they are inserted --------===//
//
// A piece inserted into a larger tensor is computed into its place when
// bufferization can see that its loop's output is only the piece
// (empty-tensor elimination). A reshape between the loop and the insert
// hides that: attention's q, k and v gradients are [batch, T, heads, d]
// loops collapsed to [batch, T, C] slices of the [batch, T, 3C] gradient,
// each written to a buffer of its own and then copied into its slice. With
// the destination expanded instead ([batch, T, 3 heads, d]), the piece is
// inserted as the loop made it, and the loop writes into the slice.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_SLICESINPLACE
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// insert_slice(collapse_shape(x)) into d  ->  collapse_shape(insert_slice x
/// into expand_shape(d)), when every collapsed group's slice of d starts and
/// ends on whole multiples of the group's inner dimensions.
struct InsertIntoExpandedDestination : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp insert,
                                PatternRewriter &rewriter) const override {
    auto collapse = insert.getSource().getDefiningOp<tensor::CollapseShapeOp>();
    RankedTensorType destType = insert.getDestType();
    if (!collapse || !destType.hasStaticShape() ||
        !collapse.getSrcType().hasStaticShape() ||
        insert.getSourceType().getRank() != destType.getRank() ||
        !insert.hasUnitStride() || !llvm::all_of(insert.getStaticOffsets(), [](int64_t o) {
          return !ShapedType::isDynamic(o);
        }))
      return failure();
    ArrayRef<int64_t> piece = collapse.getSrcType().getShape();
    SmallVector<int64_t> expanded, offsets;
    for (auto [dim, group] : llvm::enumerate(collapse.getReassociationIndices())) {
      int64_t inner = 1;
      for (int64_t d : ArrayRef<int64_t>(group).drop_front())
        inner *= piece[d];
      int64_t offset = insert.getStaticOffsets()[dim], extent = destType.getDimSize(dim);
      if (offset % inner || extent % inner)
        return failure();
      expanded.push_back(extent / inner);
      offsets.push_back(offset / inner);
      for (int64_t d : ArrayRef<int64_t>(group).drop_front()) {
        expanded.push_back(piece[d]);
        offsets.push_back(0);
      }
    }
    if (expanded.size() == size_t(destType.getRank()))
      return failure(); // nothing was collapsed
    Location loc = insert.getLoc();
    auto expandedType = RankedTensorType::get(expanded, destType.getElementType());
    SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
    Value dest = tensor::ExpandShapeOp::create(rewriter, loc, expandedType, insert.getDest(),
                                               groups);
    SmallVector<int64_t> ones(expanded.size(), 1);
    Value inserted = tensor::InsertSliceOp::create(
        rewriter, loc, collapse.getSrc(), dest, ValueRange(), ValueRange(), ValueRange(),
        offsets, piece, ones);
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(insert, destType, inserted, groups);
    return success();
  }
};

struct SlicesInPlace : public impl::SlicesInPlaceBase<SlicesInPlace> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<InsertIntoExpandedDestination>(ctx);
    // expand_shape(collapse_shape(x)) is x: consecutive pieces share the
    // expanded destination.
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    // Upstream's pass, run on each block's function only.
    OpPassManager eliminate(func::FuncOp::getOperationName());
    eliminate.addPass(bufferization::createEmptyTensorEliminationPass());
    for (auto f : getOperation().getOps<func::FuncOp>())
      if (attrs::block.has(f) && failed(runPipeline(eliminate, f)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace sinter
