//===- FuseIntoPartialSums.h - A partial sum computes what it sums -*- C++ -*-===//
#ifndef SINTER_TARGET_CUDA_FUSEINTOPARTIALSUMS_H
#define SINTER_TARGET_CUDA_FUSEINTOPARTIALSUMS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace sinter::cuda {

/// Takes into `partial` (the first reduction of a split column sum) the
/// all-parallel loop that computes the tensor it sums, when that loop's
/// results are read by others only after it: GELU's backward pass writes the
/// bf16 gradient for the matmuls from inside the bias gradient's partial
/// sums, and its f32 gradient, which only the sum read, is never written;
/// a layer norm's backward pass writes the residual's gradient, which flows
/// on, as its bias's partial sums read it. Each element is still computed
/// once: the partial visits each once.
void fuseProducerIntoPartial(mlir::RewriterBase &rewriter,
                             mlir::linalg::GenericOp partial);

} // namespace sinter::cuda

#endif // SINTER_TARGET_CUDA_FUSEINTOPARTIALSUMS_H
