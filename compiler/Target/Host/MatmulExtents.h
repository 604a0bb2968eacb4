//===- MatmulExtents.h - A matmul over its operands' padded extents -*- C++ -*-===//
//
// sinter-cuda-pitch-matmul-rows gives the matmul operands the step makes
// rows of 16-element multiples, and the head's second operand padded rows.
// cuBLASLt runs at full rate only on extents that are such multiples, so a
// product whose operands all have room past an odd extent runs over it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TARGET_HOST_MATMULEXTENTS_H
#define SINTER_TARGET_HOST_MATMULEXTENTS_H

#include "compiler/Target/Host/MatmulForm.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace sinter::host {

/// What padded extents are multiples of: sinter-cuda-pitch-matmul-rows pads
/// to it, and a product runs over extents rounded up to it.
inline constexpr int64_t kPaddedExtentMultiple = 16;

/// Whether a reshape (of tensors or of buffers) keeps the innermost
/// dimension as it is: rows stay rows, and a view of padded rows stays one.
template <typename Reshape> bool keepsRows(Reshape op) {
  llvm::SmallVector<mlir::ReassociationIndices> groups = op.getReassociationIndices();
  return !groups.empty() && groups.back().size() == 1;
}

struct MatmulExtents {
  int64_t n, k;
};

/// The extents `op` (C[m, n] += A[m, k] B[k, n] in `form`) may run over: n
/// and k rounded up to multiples of 16 where every operand with that
/// extent is one whose padding is its own (sinter.padded_operands) and
/// the leading part of a buffer that long. The padding of k is
/// zero-filled just before `op` (its products add nothing); the padding of
/// n is written with products nothing reads. n stays when the product adds
/// a bias (it has n elements).
MatmulExtents paddedExtents(mlir::linalg::MatmulOp op, MatmulForm form, bool withBias);

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_MATMULEXTENTS_H
