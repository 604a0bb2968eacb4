//===- Dropout.cpp - Training dropout with a counter-based mask -----------===//
//
// Philox-4x32-10 (Salmon et al., SC'11) computed per element inside one
// parallel loop: no state, no stored mask, any element computable on its
// own, so the backward pass recomputes the mask instead of keeping it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Train/IR/TrainOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace sinter::lowering {
namespace {

/// The first word of Philox-4x32-10 of `counter` under `key` (i32 values).
Value philoxWord(OpBuilder &b, Location l, std::array<Value, 4> c,
                 std::array<Value, 2> k) {
  Type i32 = b.getI32Type();
  auto constant = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(b, l, b.getIntegerAttr(i32, int32_t(v)));
  };
  Value mul0 = constant(0xD2511F53), mul1 = constant(0xCD9E8D57);
  Value weyl0 = constant(0x9E3779B9), weyl1 = constant(0xBB67AE85);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] = arith::AddIOp::create(b, l, k[0], weyl0);
      k[1] = arith::AddIOp::create(b, l, k[1], weyl1);
    }
    auto p0 = arith::MulUIExtendedOp::create(b, l, mul0, c[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, l, mul1, c[2]);
    Value x0 = arith::XOrIOp::create(
        b, l, arith::XOrIOp::create(b, l, p1.getHigh(), c[1]), k[0]);
    Value x2 = arith::XOrIOp::create(
        b, l, arith::XOrIOp::create(b, l, p0.getHigh(), c[3]), k[1]);
    c = {x0, p1.getLow(), x2, p0.getLow()};
  }
  return c[0];
}

/// `stream`, plus the i64 scalar tensor `offset` when there is one, as i32.
Value streamId(OpBuilder &b, Location loc, int64_t stream, Value offset) {
  Type i32 = b.getI32Type();
  Value id = arith::ConstantOp::create(b, loc, b.getIntegerAttr(i32, int32_t(stream)));
  if (!offset)
    return id;
  Value layer = tensor::ExtractOp::create(b, loc, offset, ValueRange{});
  return arith::AddIOp::create(b, loc, id,
                               arith::TruncIOp::create(b, loc, i32, layer));
}

Value dropout(TensorBuilder &tb, Value x, double p, int64_t stream,
              Value offset) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  RankedTensorType type = TensorBuilder::typeOf(x);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value streamValue = streamId(b, loc, stream, offset);
  Value micro = train::MicroBatchIndexOp::create(b, loc, b.getIndexType());
  Value key = train::RandomKeyOp::create(b, loc, i64, micro);
  Value key0 = arith::TruncIOp::create(b, loc, i32, key);
  Value key1 = arith::TruncIOp::create(
      b, loc, i32,
      arith::ShRUIOp::create(
          b, loc, key,
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32))));
  int64_t rank = type.getRank();
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * type.getDimSize(d + 1);
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  double keep = 1.0 - p;
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{x},
             ValueRange{tb.empty(type.getShape(), type.getElementType())},
             {id, id}, iterators,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               // The element's row-major position is the counter.
               Value position = arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(0));
               for (int64_t d = 0; d < rank; ++d) {
                 Value i = arith::IndexCastOp::create(
                     nb, l, i64, linalg::IndexOp::create(nb, l, d));
                 Value s = arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(strides[d]));
                 position = arith::AddIOp::create(
                     nb, l, position, arith::MulIOp::create(nb, l, i, s));
               }
               Value lo = arith::TruncIOp::create(nb, l, i32, position);
               Value hi = arith::TruncIOp::create(
                   nb, l, i32,
                   arith::ShRUIOp::create(
                       nb, l, position,
                       arith::ConstantOp::create(nb, l, nb.getI64IntegerAttr(32))));
               Value zero32 = arith::ConstantOp::create(nb, l, nb.getIntegerAttr(i32, 0));
               Value word = philoxWord(nb, l, {lo, hi, streamValue, zero32}, {key0, key1});
               // The top 24 bits as a uniform in [0, 1), exact in f32.
               Value top = arith::ShRUIOp::create(
                   nb, l, word,
                   arith::ConstantOp::create(nb, l, nb.getIntegerAttr(i32, 8)));
               Type f32 = nb.getF32Type();
               Value u = arith::MulFOp::create(
                   nb, l, arith::UIToFPOp::create(nb, l, f32, top),
                   arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0x1p-24f)));
               Value kept = arith::CmpFOp::create(
                   nb, l, arith::CmpFPredicate::OGE, u,
                   arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(float(p))));
               Type et = a[0].getType();
               Value scaled = arith::MulFOp::create(
                   nb, l, a[0], TensorBuilder::scalarAt(nb, l, 1.0 / keep, et));
               Value zero = TensorBuilder::scalarAt(nb, l, 0.0, et);
               linalg::YieldOp::create(
                   nb, l, Value(arith::SelectOp::create(nb, l, kept, scaled, zero)));
             })
      .getResult(0);
}

Results lowerDropout(TensorBuilder &tb, graph::DropoutOp op,
                     graph::DropoutOp::Adaptor a) {
  return one(dropout(tb, a.getInput(), op.getP().convertToDouble(),
                     op.getStream(), a.getOffset()));
}

} // namespace

void populateDropoutPatterns(RewritePatternSet &patterns) {
  addLowering<graph::DropoutOp>(patterns, lowerDropout);
}

} // namespace sinter::lowering
