//===- Lowering.h - Conversion patterns of graph ops, by family -*- C++ -*-===//
//
// Each family of graph ops has one file that adds its conversion patterns
// (populate*Patterns). A pattern of a single op is a function from the op and
// its adaptor (the operands already converted) to the values that replace
// it, built with a TensorBuilder at the op's location (addLowering).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CONVERSION_GRAPHTOLINALG_LOWERING_H
#define SINTER_CONVERSION_GRAPHTOLINALG_LOWERING_H

#include "compiler/Conversion/GraphToLinalg/TensorBuilder.h"

#include "mlir/Transforms/DialectConversion.h"

namespace sinter::lowering {

using Results = mlir::FailureOr<llvm::SmallVector<mlir::Value>>;

inline Results one(mlir::Value v) { return llvm::SmallVector<mlir::Value>{v}; }
inline mlir::RankedTensorType typeOf(mlir::Value v) { return TensorBuilder::typeOf(v); }
inline llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) { return typeOf(v).getShape(); }
inline mlir::Type elementOf(mlir::Value v) { return typeOf(v).getElementType(); }

template <typename OpT>
using LowerFn = Results (*)(TensorBuilder &, OpT, typename OpT::Adaptor);

/// The conversion pattern of one op given by its lowering function.
template <typename OpT> class Lowering : public mlir::OpConversionPattern<OpT> {
public:
  Lowering(mlir::MLIRContext *context, LowerFn<OpT> lower)
      : mlir::OpConversionPattern<OpT>(context), lower(lower) {}

  mlir::LogicalResult
  matchAndRewrite(OpT op, typename OpT::Adaptor adaptor,
                  mlir::ConversionPatternRewriter &rewriter) const override {
    TensorBuilder tb(rewriter, op.getLoc());
    Results values = lower(tb, op, adaptor);
    if (mlir::failed(values))
      return mlir::failure();
    rewriter.replaceOp(op, *values);
    return mlir::success();
  }

private:
  LowerFn<OpT> lower;
};

template <typename OpT>
void addLowering(mlir::RewritePatternSet &patterns, LowerFn<OpT> lower) {
  patterns.add<Lowering<OpT>>(patterns.getContext(), lower);
}

/// A generic over `type`'s shape whose body also sees the linalg.index of
/// each dimension; for ops that compute from coordinates.
mlir::Value
indexedMap(TensorBuilder &tb, mlir::RankedTensorType type, mlir::ValueRange inputs,
           llvm::ArrayRef<mlir::AffineMap> inputMaps,
           llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                          mlir::ValueRange, llvm::ArrayRef<mlir::Value>)>
               body);

/// The map of an operand that covers the leading `n` dims of a rank-`rank`
/// iteration space.
mlir::AffineMap leadingMap(int64_t rank, int64_t n, mlir::MLIRContext *ctx);

/// An integer id as an index clamped into [0, n): the runtime refuses ids out
/// of range, and a clamp keeps any that slipped through from reading out of
/// bounds.
mlir::Value clampedIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value id,
                         int64_t n);

/// Graph-level rewrites that run before the conversion:
/// matmul(x, transpose(w)) becomes matmul_transposed(x, w).
void populateMatmulOfTransposePatterns(mlir::RewritePatternSet &patterns);

// The families (one file each).
void populateElementwisePatterns(mlir::RewritePatternSet &patterns);
void populateShapePatterns(mlir::RewritePatternSet &patterns);
void populateLinearPatterns(mlir::RewritePatternSet &patterns);
void populateReductionPatterns(mlir::RewritePatternSet &patterns);
void populateBatchNormPatterns(mlir::RewritePatternSet &patterns);
void populateIndexingPatterns(mlir::RewritePatternSet &patterns);
void populateLossPatterns(mlir::RewritePatternSet &patterns);
void populateConvolutionPatterns(mlir::RewritePatternSet &patterns);
void populateDropoutPatterns(mlir::RewritePatternSet &patterns);

} // namespace sinter::lowering

#endif // SINTER_CONVERSION_GRAPHTOLINALG_LOWERING_H
