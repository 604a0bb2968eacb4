//===- Pooling.h - 2-D pooling and its gradient in linalg -------*- C++ -*-===//
#ifndef SINTER_CONVERSION_GRAPHTOLINALG_POOLING_H
#define SINTER_CONVERSION_GRAPHTOLINALG_POOLING_H

#include "compiler/Conversion/GraphToLinalg/TensorBuilder.h"

namespace sinter::lowering {

/// The window of a max or average pooling over the last two axes of NCHW.
struct PoolWindow {
  int64_t kernel[2];
  int64_t stride[2];
  int64_t padding[2];
  bool max;
};

/// max_pool2d / avg_pool2d of `input` into `resultType`.
mlir::Value pool2d(TensorBuilder &tb, mlir::Value input,
                   mlir::RankedTensorType resultType, const PoolWindow &w);

/// The gradient with respect to `input` of pool2d(input), given `grad`, the
/// gradient of its result.
mlir::Value pool2dGrad(TensorBuilder &tb, mlir::Value input, mlir::Value grad,
                       const PoolWindow &w);

} // namespace sinter::lowering

#endif // SINTER_CONVERSION_GRAPHTOLINALG_POOLING_H
