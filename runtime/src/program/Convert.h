//===- Convert.h - Element conversion between dtypes --------------------===//
#ifndef SINTER_RT_PROGRAM_CONVERT_H
#define SINTER_RT_PROGRAM_CONVERT_H

#include "sinter/rt/DType.h"
#include "sinter/rt/Status.h"

#include <cstdint>

namespace sinter::rt {

/// Converts `count` elements from `srcType` to `dstType`, as NumPy's astype
/// would. Integer to floating point and back are allowed; an integer that
/// does not fit the destination is an error (a label of 2^40 is a bug in the
/// data, not something to wrap around).
Status convertElements(const void *src, DType srcType, void *dst, DType dstType,
                       uint64_t count);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_CONVERT_H
