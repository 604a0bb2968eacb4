//===- Shape.cpp - Reshape, transpose, concat and slice -------------------===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::lowering {
namespace {

Results lowerReshape(TensorBuilder &tb, ReshapeOp op, ReshapeOp::Adaptor a) {
  return one(tb.reshape(a.getInput(), op.getType().getShape()));
}

Results lowerTranspose(TensorBuilder &tb, TransposeOp op, TransposeOp::Adaptor a) {
  return one(tb.transpose(a.getInput(), op.getPermutation()));
}

Results lowerConcat(TensorBuilder &tb, ConcatOp op, ConcatOp::Adaptor a) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  auto type = cast<RankedTensorType>(op.getType());
  Value acc = tb.empty(type.getShape(), type.getElementType());
  int64_t axis = op.getAxis();
  int64_t offset = 0;
  for (Value in : a.getInputs()) {
    ArrayRef<int64_t> s = shapeOf(in);
    SmallVector<OpFoldResult> offsets(s.size(), b.getIndexAttr(0)), sizes,
        strides(s.size(), b.getIndexAttr(1));
    for (int64_t d : s)
      sizes.push_back(b.getIndexAttr(d));
    offsets[axis] = b.getIndexAttr(offset);
    acc = tensor::InsertSliceOp::create(b, loc, in, acc, offsets, sizes, strides);
    offset += s[axis];
  }
  return one(acc);
}

Results lowerSlice(TensorBuilder &tb, SliceOp op, SliceOp::Adaptor a) {
  OpBuilder &b = tb.builder();
  ArrayRef<int64_t> s = shapeOf(a.getInput());
  SmallVector<OpFoldResult> offsets(s.size(), b.getIndexAttr(0)), sizes,
      strides(s.size(), b.getIndexAttr(1));
  for (int64_t d : op.getType().getShape())
    sizes.push_back(b.getIndexAttr(d));
  offsets[op.getAxis()] = b.getIndexAttr(op.getStart());
  return one(tensor::ExtractSliceOp::create(b, tb.location(), op.getType(),
                                            a.getInput(), offsets, sizes,
                                            strides));
}

} // namespace

void populateShapePatterns(RewritePatternSet &patterns) {
  addLowering<ReshapeOp>(patterns, lowerReshape);
  addLowering<TransposeOp>(patterns, lowerTranspose);
  addLowering<ConcatOp>(patterns, lowerConcat);
  addLowering<SliceOp>(patterns, lowerSlice);
}

} // namespace sinter::lowering
