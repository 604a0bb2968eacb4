//===- Indexing.cpp - Gathers, scatters and ops computed from coordinates -===//
//
// embedding and its gradient (a scatter-add), one_hot and arange, and the
// helpers other families use to compute from coordinates.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToLinalg/Lowering.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace sinter::graph;

namespace sinter::lowering {

Value indexedMap(TensorBuilder &tb, RankedTensorType type, ValueRange inputs,
                 ArrayRef<AffineMap> inputMaps,
                 function_ref<Value(OpBuilder &, Location, ValueRange,
                                    ArrayRef<Value>)> body) {
  OpBuilder &b = tb.builder();
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, b.getContext()));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  Value init = tb.empty(type.getShape(), type.getElementType());
  auto generic = linalg::GenericOp::create(
      b, tb.location(), TypeRange{type}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        SmallVector<Value> idx;
        for (int64_t d = 0; d < rank; ++d)
          idx.push_back(linalg::IndexOp::create(nb, nloc, d));
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args.drop_back(), idx));
      });
  return generic.getResult(0);
}

AffineMap leadingMap(int64_t rank, int64_t n, MLIRContext *ctx) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < n; ++i)
    exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

Value clampedIndex(OpBuilder &b, Location loc, Value id, int64_t n) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), id);
  Value lo = arith::ConstantIndexOp::create(b, loc, 0);
  Value hi = arith::ConstantIndexOp::create(b, loc, n - 1);
  return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, i, lo), hi);
}

namespace {

Results lowerEmbedding(TensorBuilder &tb, EmbeddingOp op, EmbeddingOp::Adaptor ad) {
  RankedTensorType type = op.getType();
  Value table = ad.getTable();
  int64_t rows = shapeOf(table)[0];
  int64_t rank = type.getRank();
  AffineMap idsMap = leadingMap(rank, rank - 1, tb.builder().getContext());
  return one(indexedMap(tb, type, {ad.getIds()}, {idsMap},
                        [&](OpBuilder &b, Location l, ValueRange a,
                            ArrayRef<Value> idx) -> Value {
                          Value row = clampedIndex(b, l, a[0], rows);
                          return tensor::ExtractOp::create(
                              b, l, table, ValueRange{row, idx.back()});
                        }));
}

/// Scatter-add of rows: a loop over positions, each adding its gradient
/// row into the row of its id (ids outside the table are clamped, as in the
/// forward gather).
Results lowerEmbeddingGrad(TensorBuilder &tb, EmbeddingGradOp op,
                           EmbeddingGradOp::Adaptor ad) {
  OpBuilder &b = tb.builder();
  Location loc = tb.location();
  RankedTensorType out = op.getType();
  int64_t rows = out.getDimSize(0), width = out.getDimSize(1);
  Value ids = ad.getIds(), grad = ad.getGrad();
  int64_t n = typeOf(ids).getNumElements();
  Value flatIds = tb.reshape(ids, {n});
  Value flatGrad = tb.reshape(grad, {n, width});
  Value init = tb.filled(out.getShape(), out.getElementType(), 0.0);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value unit = arith::ConstantIndexOp::create(b, loc, 1);
  Value count = arith::ConstantIndexOp::create(b, loc, n);
  Value widthV = arith::ConstantIndexOp::create(b, loc, width);
  auto positions = scf::ForOp::create(
      b, loc, zero, count, unit, ValueRange{init},
      [&](OpBuilder &lb, Location l, Value p, ValueRange acc) {
        Value id = tensor::ExtractOp::create(lb, l, flatIds, ValueRange{p});
        Value row = clampedIndex(lb, l, id, rows);
        auto columns = scf::ForOp::create(
            lb, l, zero, widthV, unit, acc,
            [&](OpBuilder &cb, Location cl, Value d, ValueRange inner) {
              Value g = tensor::ExtractOp::create(cb, cl, flatGrad,
                                                  ValueRange{p, d});
              Value old = tensor::ExtractOp::create(cb, cl, inner[0],
                                                    ValueRange{row, d});
              Value sum = scalar::add(cb, cl, old, g);
              Value next = tensor::InsertOp::create(cb, cl, sum, inner[0],
                                                    ValueRange{row, d});
              scf::YieldOp::create(cb, cl, next);
            });
        scf::YieldOp::create(lb, l, columns.getResults());
      });
  return one(positions.getResult(0));
}

Results lowerOneHot(TensorBuilder &tb, OneHotOp op, OneHotOp::Adaptor ad) {
  RankedTensorType type = op.getType();
  int64_t rank = type.getRank();
  AffineMap idsMap = leadingMap(rank, rank - 1, tb.builder().getContext());
  return one(indexedMap(
      tb, type, {ad.getIds()}, {idsMap},
      [&](OpBuilder &b, Location l, ValueRange a, ArrayRef<Value> idx) -> Value {
        Value id = arith::IndexCastOp::create(b, l, b.getIndexType(), a[0]);
        Value hit = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, id,
                                          idx.back());
        return scalar::convert(b, l, hit, type.getElementType());
      }));
}

Results lowerArange(TensorBuilder &tb, ArangeOp op, ArangeOp::Adaptor) {
  RankedTensorType type = op.getType();
  return one(indexedMap(tb, type, {}, {},
                        [&](OpBuilder &b, Location l, ValueRange,
                            ArrayRef<Value> idx) -> Value {
                          return arith::IndexCastOp::create(
                              b, l, type.getElementType(), idx[0]);
                        }));
}

} // namespace

void populateIndexingPatterns(RewritePatternSet &patterns) {
  addLowering<EmbeddingOp>(patterns, lowerEmbedding);
  addLowering<EmbeddingGradOp>(patterns, lowerEmbeddingGrad);
  addLowering<OneHotOp>(patterns, lowerOneHot);
  addLowering<ArangeOp>(patterns, lowerArange);
}

} // namespace sinter::lowering
