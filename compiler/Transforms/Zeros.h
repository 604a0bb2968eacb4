//===- Zeros.h - Tensors and buffers known to hold zeros --------*- C++ -*-===//
#ifndef SINTER_TRANSFORMS_ZEROS_H
#define SINTER_TRANSFORMS_ZEROS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace sinter {

/// Whether `fill` writes zeros (either sign).
inline bool fillsZeros(mlir::linalg::FillOp fill) {
  auto c = fill.getInputs()[0].getDefiningOp<mlir::arith::ConstantOp>();
  auto f = c ? mlir::dyn_cast<mlir::FloatAttr>(c.getValue()) : mlir::FloatAttr();
  return f && f.getValue().isZero();
}

/// Whether `v` is a tensor just filled with zeros (a matmul onto it is a
/// plain product; a zero piece of a padded value).
inline bool isZeros(mlir::Value v) {
  auto fill = v.getDefiningOp<mlir::linalg::FillOp>();
  return fill && fillsZeros(fill);
}

} // namespace sinter

#endif // SINTER_TRANSFORMS_ZEROS_H
