//===- DType.h - The element types of the Sinter language ------*- C++ -*-===//
//
// The runtime's view of the element types (runtime/contract/DType.h, their
// one definition), with numpy's names for the data readers' messages.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_DTYPE_H
#define SINTER_RT_DTYPE_H

#include "runtime/contract/DType.h"

namespace sinter::rt {

using sinter::DType;
using sinter::dtypeName;
using sinter::dtypeSize;
using sinter::isFloatingPoint;
using sinter::parseDType;

/// numpy's spelling, for messages about .npy files: "float64" ... "bool".
const char *dtypeNumpyName(DType t);

} // namespace sinter::rt

#endif // SINTER_RT_DTYPE_H
