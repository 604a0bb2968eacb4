//===- MatmulExtents.cpp - A matmul over its operands' padded extents -----===//

#include "compiler/Target/Host/MatmulExtents.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace sinter::host {
namespace {

/// Where dimension `dim` of a buffer continues: the view that takes the
/// leading part of a larger buffer, and the dimension of that view.
struct Room {
  memref::SubViewOp view;
  int64_t dim = 0;
  int64_t extent = 0; ///< how far the dimension may grow
};

/// The room past dimension `dim` of `v`, through reshapes that keep its
/// rows (for the last dimension); none unless `v` is the leading part of a
/// static buffer.
Room roomPast(Value v, int64_t dim) {
  while (Operation *def = v.getDefiningOp()) {
    int64_t last = cast<MemRefType>(v.getType()).getRank() - 1;
    Value source;
    if (auto collapse = dyn_cast<memref::CollapseShapeOp>(def);
        collapse && keepsRows(collapse))
      source = collapse.getSrc();
    else if (auto expand = dyn_cast<memref::ExpandShapeOp>(def);
             expand && keepsRows(expand))
      source = expand.getSrc();
    if (!source || dim != last)
      break;
    v = source;
    dim = cast<MemRefType>(v.getType()).getRank() - 1;
  }
  auto view = v.getDefiningOp<memref::SubViewOp>();
  if (!view || view.getSourceType().getRank() != view.getType().getRank() ||
      !view.getSourceType().hasStaticShape() || !view.hasUnitStride() ||
      !llvm::all_of(view.getStaticOffsets(), [](int64_t o) { return o == 0; }))
    return {};
  return {view, dim, view.getSourceType().getDimSize(dim)};
}

/// Zeros in `room`'s buffer from `from` to `to` along its dimension, over
/// the view's extent in the others.
void fillZeros(OpBuilder &b, Location loc, Room room, int64_t from, int64_t to) {
  MemRefType type = room.view.getSourceType();
  SmallVector<int64_t> offsets(type.getRank(), 0), strides(type.getRank(), 1);
  SmallVector<int64_t> sizes(room.view.getStaticSizes());
  offsets[room.dim] = from;
  sizes[room.dim] = to - from;
  Value pad =
      memref::SubViewOp::create(b, loc, room.view.getSource(), offsets, sizes, strides);
  Value zero = arith::ConstantOp::create(b, loc, type.getElementType(),
                                         b.getZeroAttr(type.getElementType()));
  linalg::FillOp::create(b, loc, zero, pad);
}

} // namespace

MatmulExtents paddedExtents(linalg::MatmulOp op, MatmulForm form, bool withBias) {
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  // Only padding that is the operand's own: a view at offset 0 of a live
  // buffer (a slice of an input) has room past it too, not for us to use.
  DenseI64ArrayAttr own = attrs::paddedOperands.get(op);
  auto roomOf = [&](unsigned operand, int64_t dim) {
    return own && llvm::is_contained(own.asArrayRef(), int64_t(operand))
               ? roomPast(op->getOperand(operand), dim)
               : Room{};
  };
  auto at = cast<MemRefType>(a.getType()), bt = cast<MemRefType>(b.getType());
  MatmulExtents extents{bt.getDimSize(form.transposedB ? 0 : 1),
                        at.getDimSize(form.transposedA ? 0 : 1)};
  int64_t n = llvm::alignTo(extents.n, kPaddedExtentMultiple);
  if (!withBias && n != extents.n && roomOf(2, 1).extent >= n &&
      roomOf(1, form.transposedB ? 0 : 1).extent >= n)
    extents.n = n;
  int64_t k = llvm::alignTo(extents.k, kPaddedExtentMultiple);
  Room roomA = roomOf(0, form.transposedA ? 0 : 1),
       roomB = roomOf(1, form.transposedB ? 1 : 0);
  if (k != extents.k && roomA.extent >= k && roomB.extent >= k) {
    OpBuilder builder(op);
    fillZeros(builder, op.getLoc(), roomA, extents.k, k);
    fillZeros(builder, op.getLoc(), roomB, extents.k, k);
    extents.k = k;
  }
  return extents;
}

} // namespace sinter::host
