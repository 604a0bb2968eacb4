//===- MatmulForm.h - The matmuls the libraries take ------------*- C++ -*-===//
//
// C[m, n] += A · B as linalg.matmul with A stored as [m, k] or, transposed,
// [k, m], and B as [k, n] or [n, k]: the four forms that oneDNN and
// cuBLASLt read in place.
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

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_MATMULFORM_H
