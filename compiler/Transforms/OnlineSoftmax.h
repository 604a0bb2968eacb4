//===- OnlineSoftmax.h - A softmax's row statistics in one pass -----------===//
#ifndef SINTER_TRANSFORMS_ONLINESOFTMAX_H
#define SINTER_TRANSFORMS_ONLINESOFTMAX_H

#include "mlir/IR/Builders.h"

namespace sinter {

// The generic that `sinter-online-softmax` makes carries
// attrs::onlineSoftmax: its two outputs are a row's running maximum m and
// its running sum s of exp(x - m), and its body folds one x into both. A
// target that splits a row among threads combines two partials (m1, s1),
// (m2, s2) as m = max(m1, m2), s = rescaledSum(s1, m1, m) +
// rescaledSum(s2, m2, m).

/// exp(a - b), or 0 where a is -inf: b is a maximum a took part in, so a
/// row or a partial of -inf only counts nothing, not NaN.
mlir::Value expOfDifference(mlir::OpBuilder &b, mlir::Location loc, mlir::Value a,
                            mlir::Value max);

/// A sum of exp(x - m) over some x, rescaled to the larger maximum `max`:
/// sum * exp(m - max), in the sum's type.
mlir::Value rescaledSum(mlir::OpBuilder &b, mlir::Location loc, mlir::Value sum,
                        mlir::Value m, mlir::Value max);

} // namespace sinter

#endif // SINTER_TRANSFORMS_ONLINESOFTMAX_H
