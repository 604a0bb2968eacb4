//===- MergePaddedSums.cpp - Sums of zero-padded pieces as one tensor -----===//
//
// The gradient of a value read through several slices (attention's q, k and
// v from one projection) is the sum of the slices' gradients, each padded
// with zeros to the whole value's shape: three full-size tensors, mostly
// zeros, written and added. When the pieces do not overlap, the sum is the
// pieces themselves, each in its place: x + 0 + 0 is x.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "compiler/Transforms/Zeros.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <algorithm>

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_MERGEPADDEDSUMS
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// A box of a tensor: static offsets and sizes, unit strides.
struct Box {
  SmallVector<int64_t> offsets, sizes;
  bool overlaps(const Box &other) const {
    for (auto [o, s, p, q] : llvm::zip(offsets, sizes, other.offsets, other.sizes))
      if (o + s <= p || p + q <= o)
        return false;
    return true;
  }
  int64_t volume() const {
    int64_t v = 1;
    for (int64_t s : sizes)
      v *= s;
    return v;
  }
};

/// A value that is nonzero only in `pieces`.
struct Padded {
  SmallVector<std::pair<Value, Box>> pieces;
};

std::optional<Box> boxOf(tensor::InsertSliceOp insert) {
  if (!insert.hasUnitStride() || ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
      ShapedType::isDynamicShape(insert.getStaticSizes()) ||
      insert.getSourceType().getRank() != insert.getDestType().getRank())
    return std::nullopt;
  return Box{SmallVector<int64_t>(insert.getStaticOffsets()),
             SmallVector<int64_t>(insert.getStaticSizes())};
}

/// `v` as nonzero pieces: a chain of insert_slices of zeros and of values,
/// none overlapping another, into zeros or into an empty tensor that they
/// cover.
std::optional<Padded> paddedOf(Value v) {
  Padded padded;
  SmallVector<Box> regions;
  int64_t covered = 0;
  auto type = cast<RankedTensorType>(v.getType());
  while (auto insert = v.getDefiningOp<tensor::InsertSliceOp>()) {
    std::optional<Box> box = boxOf(insert);
    if (!box || llvm::any_of(regions, [&](const Box &b) { return b.overlaps(*box); }))
      return std::nullopt;
    regions.push_back(*box);
    covered += box->volume();
    if (!isZeros(insert.getSource()))
      padded.pieces.push_back({insert.getSource(), *box});
    v = insert.getDest();
  }
  if (isZeros(v) ||
      (v.getDefiningOp<tensor::EmptyOp>() && covered == type.getNumElements()))
    return padded;
  return std::nullopt;
}

/// Whether `op` yields the sum of its inputs, each once, in its own type.
bool sumsItsInputs(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumLoops() != op.getNumParallelLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  Block &body = op.getRegion().front();
  SmallVector<Value> leaves;
  SmallVector<Value> work{body.getTerminator()->getOperand(0)};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto add = v.getDefiningOp<arith::AddFOp>(); add && add->getBlock() == &body) {
      work.push_back(add.getLhs());
      work.push_back(add.getRhs());
      continue;
    }
    leaves.push_back(v);
  }
  SmallVector<Value> inputs;
  for (OpOperand *in : op.getDpsInputOperands())
    inputs.push_back(op.getMatchingBlockArgument(in));
  return leaves.size() == inputs.size() &&
         std::is_permutation(leaves.begin(), leaves.end(), inputs.begin());
}

struct MergePaddedSum : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumDpsInputs() < 2 || !sumsItsInputs(op))
      return failure();
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (!type.hasStaticShape())
      return failure();
    SmallVector<std::pair<Value, Box>> pieces;
    for (Value in : op.getDpsInputs()) {
      if (in.getType() != type)
        return failure();
      std::optional<Padded> padded = paddedOf(in);
      if (!padded)
        return failure();
      for (auto &piece : padded->pieces) {
        if (llvm::any_of(pieces,
                         [&](auto &p) { return p.second.overlaps(piece.second); }))
          return failure();
        pieces.push_back(piece);
      }
    }
    Location loc = op.getLoc();
    int64_t covered = 0;
    for (auto &piece : pieces)
      covered += piece.second.volume();
    Value merged =
        tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
    if (covered != type.getNumElements()) {
      Value zero = arith::ConstantOp::create(rewriter, loc,
                                             rewriter.getZeroAttr(type.getElementType()));
      merged = linalg::FillOp::create(rewriter, loc, zero, merged).getResult(0);
    }
    for (auto &[value, box] : pieces) {
      SmallVector<OpFoldResult> offsets, sizes, strides;
      for (auto [o, s] : llvm::zip(box.offsets, box.sizes)) {
        offsets.push_back(rewriter.getIndexAttr(o));
        sizes.push_back(rewriter.getIndexAttr(s));
        strides.push_back(rewriter.getIndexAttr(1));
      }
      merged = tensor::InsertSliceOp::create(rewriter, loc, value, merged, offsets, sizes,
                                             strides);
    }
    rewriter.replaceOp(op, merged);
    return success();
  }
};

struct MergePaddedSums : impl::MergePaddedSumsBase<MergePaddedSums> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MergePaddedSum>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter
