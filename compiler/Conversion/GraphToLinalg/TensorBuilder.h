//===- TensorBuilder.h - Building linalg/tensor IR for graph ops -*- C++ -*-===//
//
// The vocabulary the Graph->linalg conversion is written in: broadcasting
// elementwise maps, reductions, reshapes, matmuls. Every helper takes static
// shapes (the conversion checks them first) and creates ops at the builder's
// insertion point with one location, the graph op's, so that errors in later
// passes still point at the user's line.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CONVERSION_GRAPHTOLINALG_TENSORBUILDER_H
#define SINTER_CONVERSION_GRAPHTOLINALG_TENSORBUILDER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <functional>

namespace sinter::lowering {

/// Computes one scalar result from the scalar operands of an elementwise map.
using ScalarFn =
    std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

enum class ReduceKind { Sum, Max, Min };

class TensorBuilder {
public:
  TensorBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : b(builder), loc(loc) {}

  mlir::OpBuilder &builder() { return b; }
  mlir::Location location() const { return loc; }

  //===--- Scalars ------------------------------------------------------===//
  mlir::Value scalar(double value, mlir::Type type);
  static mlir::Value scalarAt(mlir::OpBuilder &b, mlir::Location loc,
                              double value, mlir::Type type);

  //===--- Tensors ------------------------------------------------------===//
  mlir::Value empty(llvm::ArrayRef<int64_t> shape, mlir::Type elementType);
  mlir::Value filled(llvm::ArrayRef<int64_t> shape, mlir::Type elementType,
                     double value);
  /// A map over `inputs` broadcast NumPy-style to `shape`.
  mlir::Value elementwise(llvm::ArrayRef<int64_t> shape, mlir::Type elementType,
                          mlir::ValueRange inputs, const ScalarFn &fn);
  /// `x` with element type `to` (arith's rounding: to nearest even).
  mlir::Value convert(mlir::Value x, mlir::Type to);
  /// Reduces `input` over `axes` (empty: all). The result keeps size-1 axes
  /// when `keepdim`.
  mlir::Value reduce(mlir::Value input, llvm::ArrayRef<int64_t> axes,
                     ReduceKind kind, bool keepdim);
  /// sum / count over `axes`.
  mlir::Value mean(mlir::Value input, llvm::ArrayRef<int64_t> axes,
                   bool keepdim);
  /// Any reshape between static shapes of one element count.
  mlir::Value reshape(mlir::Value input, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value input, llvm::ArrayRef<int64_t> perm);
  /// Swaps the last two axes.
  mlir::Value transposeLast(mlir::Value input);
  /// `a @ b` with NumPy batch broadcasting, into `shape`.
  mlir::Value matmul(mlir::Value a, mlir::Value bMat,
                     llvm::ArrayRef<int64_t> shape);
  /// `a @ transpose(w)` for a 2-D `w` of shape [n, k], without the copy.
  mlir::Value matmulTransposedB(mlir::Value a, mlir::Value w,
                                llvm::ArrayRef<int64_t> shape);
  /// The same as one contraction over a broadcast batch (any batch shapes).
  mlir::Value broadcastMatmul(mlir::Value a, mlir::Value bMat,
                              llvm::ArrayRef<int64_t> shape);
  /// Pads the last two axes by `pad` on both sides with `value`.
  mlir::Value padSpatial(mlir::Value input, const int64_t pad[2], double value);
  /// Pads the last two axes by `low` before and `high` after with `value`.
  mlir::Value padSpatial(mlir::Value input, const int64_t low[2],
                         const int64_t high[2], double value);
  /// Spreads the last two axes `stride` apart, zeros between (the input of
  /// a transposed strided window op).
  mlir::Value dilateSpatial(mlir::Value input, const int64_t stride[2]);
  /// Cuts `pad` off the start of the last two axes, down to `resultType`.
  mlir::Value cropSpatial(mlir::Value input, const int64_t pad[2],
                          mlir::RankedTensorType resultType);

  //===--- Common compositions -----------------------------------------===//
  mlir::Value add(mlir::Value x, mlir::Value y);
  mlir::Value sub(mlir::Value x, mlir::Value y);
  mlir::Value mul(mlir::Value x, mlir::Value y);
  mlir::Value div(mlir::Value x, mlir::Value y);
  mlir::Value exp(mlir::Value x);
  mlir::Value log(mlir::Value x);
  mlir::Value scale(mlir::Value x, double factor);
  /// log(sum(exp(x))) over `axis`, stable, keeping the axis (Rows: without
  /// it). One pass for the max, one for the sum; no tensor of exponentials.
  mlir::Value logSumExp(mlir::Value x, int64_t axis);
  mlir::Value logSumExpRows(mlir::Value x, int64_t axis);
  mlir::Value softmax(mlir::Value x, int64_t axis);
  mlir::Value logSoftmax(mlir::Value x, int64_t axis);

  static mlir::RankedTensorType typeOf(mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType());
  }

private:
  mlir::Value binaryFloat(mlir::Value x, mlir::Value y, int which);
  /// sum(exp(x - m)) over `axis`, m of x's shape without it (its max).
  mlir::Value sumExpShifted(mlir::Value x, mlir::Value m, int64_t axis);

  mlir::OpBuilder &b;
  mlir::Location loc;
};

/// Scalar building blocks shared by the elementwise lowerings; each picks the
/// float or integer form from the operand type.
namespace scalar {
mlir::Value add(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value sub(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value mul(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value max(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value min(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x, mlir::Value y);
mlir::Value sigmoid(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
/// Converts between any two element types of the graph dialect.
mlir::Value convert(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                    mlir::Type to);
} // namespace scalar

} // namespace sinter::lowering

#endif // SINTER_CONVERSION_GRAPHTOLINALG_TENSORBUILDER_H
