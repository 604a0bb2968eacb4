//===- Dropout.h - Training dropout with a counter-based mask ---*- C++ -*-===//
#ifndef SINTER_CONVERSION_GRAPHTOLINALG_DROPOUT_H
#define SINTER_CONVERSION_GRAPHTOLINALG_DROPOUT_H

#include "compiler/Conversion/GraphToLinalg/TensorBuilder.h"

namespace sinter::lowering {

/// x * mask / (1 - p), the mask keeping each element with probability
/// 1 - p. Element i of the mask is Philox-4x32-10 under the micro-batch's
/// random key (train.random_key) at counter (i, stream): a pure function of
/// (key, stream, position), so the gradient, a dropout of the gradient with
/// the same stream, uses the same mask.
mlir::Value dropout(TensorBuilder &tb, mlir::Value x, double p, int64_t stream);

} // namespace sinter::lowering

#endif // SINTER_CONVERSION_GRAPHTOLINALG_DROPOUT_H
