//===- PackAttention.cpp - Attention over one packed projection -----------===//
//
// GPT's attention cuts q, k and v from one projection [B, T, 3C], splits
// each into heads ([B, T, H, d]) and transposes them to [B, H, T, d]; its
// output is transposed back and reshaped to [B, T, C]. The device's fused
// attention (cuDNN's in bf16, Sinter's own kernels in f32) reads and writes
// those layouts through strides, so where it attends the whole chain is one
// graph.attention_qkv, and the transposes (copies once lowered) never
// happen, forward or backward.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>

using namespace mlir;

namespace sinter::graph {
#define GEN_PASS_DEF_GRAPHPACKATTENTION
#include "dialects/Graph/Transforms/Passes.h.inc"

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

constexpr int64_t kHeadsMajor[] = {0, 2, 1, 3};

/// One of q, k, v: columns [start, start + C) of `packed` [B, T, 3C],
/// reshaped to [B, T, heads, d] and transposed to [B, heads, T, d].
struct Block {
  Value packed;
  int64_t start = 0, heads = 0;
  SmallVector<Operation *, 3> chain; ///< transpose, reshape, slice
};

std::optional<Block> blockOf(Value v) {
  auto transpose = v.getDefiningOp<TransposeOp>();
  if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>(kHeadsMajor))
    return std::nullopt;
  auto reshape = transpose.getInput().getDefiningOp<ReshapeOp>();
  if (!reshape)
    return std::nullopt;
  auto slice = reshape.getInput().getDefiningOp<SliceOp>();
  if (!slice)
    return std::nullopt;
  RankedTensorType packed = typeOf(slice.getInput()), cut = typeOf(slice.getResult()),
                   split = typeOf(reshape.getResult());
  if (packed.getRank() != 3 || !packed.hasStaticShape() || split.getRank() != 4 ||
      !split.hasStaticShape())
    return std::nullopt;
  // Negative axes and bounds count from the end.
  auto axis = int64_t(slice.getAxis()), start = int64_t(slice.getStart());
  if (axis != 2 && axis != -1)
    return std::nullopt;
  int64_t c = cut.getDimSize(2);
  if (split.getDimSize(0) != packed.getDimSize(0) ||
      split.getDimSize(1) != packed.getDimSize(1) ||
      split.getDimSize(2) * split.getDimSize(3) != c ||
      packed.getDimSize(2) != 3 * c)
    return std::nullopt;
  if (start < 0)
    start += 3 * c;
  return Block{slice.getInput(), start, split.getDimSize(2), {transpose, reshape, slice}};
}

/// Erases `ops` in order while they have no users.
void eraseUnused(ArrayRef<Operation *> ops) {
  for (Operation *op : ops)
    if (op->use_empty())
      op->erase();
}

LogicalResult pack(AttentionOp op) {
  if (!attrs::fusesAttention(op))
    return failure();
  std::optional<Block> q = blockOf(op.getQuery()), k = blockOf(op.getKey()),
                       v = blockOf(op.getValue());
  if (!q || !k || !v || q->packed != k->packed || k->packed != v->packed ||
      q->heads != k->heads || k->heads != v->heads)
    return failure();
  RankedTensorType packed = typeOf(q->packed), heads = typeOf(op.getResult());
  int64_t b = packed.getDimSize(0), t = packed.getDimSize(1),
          c = packed.getDimSize(2) / 3, h = q->heads;
  if (q->start != 0 || k->start != c || v->start != 2 * c)
    return failure();
  OpBuilder builder(op);
  Location loc = op.getLoc();
  Type element = packed.getElementType();
  auto fused = AttentionQkvOp::create(
      builder, loc, RankedTensorType::get({b, t, c}, element),
      RankedTensorType::get({b, h, t}, builder.getF32Type()), q->packed,
      builder.getI64IntegerAttr(h), op.getCausalAttr());
  // [B, T, C] as [B, T, H, d]: what transposing the heads back gives.
  auto split = ReshapeOp::create(
      builder, loc, RankedTensorType::get({b, t, h, heads.getDimSize(3)}, element),
      fused.getResult());
  for (Operation *user : llvm::make_early_inc_range(op.getResult().getUsers())) {
    auto back = dyn_cast<TransposeOp>(user);
    if (!back || back.getPermutation() != ArrayRef<int64_t>(kHeadsMajor))
      continue;
    for (Operation *reader : llvm::make_early_inc_range(back.getResult().getUsers()))
      if (auto merge = dyn_cast<ReshapeOp>(reader);
          merge && merge.getType() == fused.getResult().getType()) {
        merge.replaceAllUsesWith(fused.getResult());
        merge.erase();
      }
    back.replaceAllUsesWith(split.getResult());
    back.erase();
  }
  if (!op.getResult().use_empty()) {
    builder.setInsertionPointAfter(split);
    op.getResult().replaceAllUsesWith(TransposeOp::create(
        builder, loc, split.getResult(), builder.getDenseI64ArrayAttr(kHeadsMajor)));
  }
  op.erase();
  eraseUnused({split});
  for (const Block &block : {*q, *k, *v})
    eraseUnused(block.chain);
  return success();
}

struct GraphPackAttention : public impl::GraphPackAttentionBase<GraphPackAttention> {
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) { ops.push_back(op); });
    for (AttentionOp op : ops)
      (void)pack(op);
  }
};

} // namespace
} // namespace sinter::graph
