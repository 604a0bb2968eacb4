//===- MatmulForm.h - The matmuls the libraries take ------------*- C++ -*-===//
//
// C[m, n] += A · B as linalg.matmul with A stored as [m, k] or, transposed,
// [k, m], and B as [k, n] or [n, k]: the four forms that oneDNN and
// cuBLASLt read in place. The same four for each batch of a
// linalg.batch_matmul (A [batch, m, k] or [batch, k, m], and so on).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TARGET_HOST_MATMULFORM_H
#define SINTER_TARGET_HOST_MATMULFORM_H

#include "compiler/Transforms/Zeros.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace sinter::host {

struct MatmulForm {
  bool transposedA = false, transposedB = false;
};

/// linalg.matmul's indexing maps of the form.
llvm::SmallVector<mlir::AffineMap> matmulMaps(mlir::MLIRContext *ctx, MatmulForm f);

/// The form of `op`, if its maps are one of the four.
std::optional<MatmulForm> matmulFormOf(mlir::linalg::MatmulOp op);

/// linalg.batch_matmul's indexing maps of the form (d0 the batch).
llvm::SmallVector<mlir::AffineMap> batchMatmulMaps(mlir::MLIRContext *ctx, MatmulForm f);

/// The form of `op`, if its maps are one of the four (the default maps are
/// the plain form).
std::optional<MatmulForm> batchMatmulFormOf(mlir::linalg::BatchMatmulOp op);

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_MATMULFORM_H
