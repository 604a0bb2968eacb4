//===- DType.h - The element types of the Sinter language ------*- C++ -*-===//
//
// The seven element types of LANGUAGE.md section 4, shared by the data
// readers, the checkpoint format and the initialisers. All are stored
// little-endian; bool is one byte holding 0 or 1, bf16 is the upper half of
// an IEEE float32.
//
//===----------------------------------------------------------------------===//

#ifndef SINTER_RT_DTYPE_H
#define SINTER_RT_DTYPE_H

#include <cstddef>
#include <optional>
#include <string_view>

namespace sinter::rt {

enum class DType { F64, F32, BF16, F16, I64, I32, Bool };

/// Bytes per element: 8, 4, 2, 2, 8, 4, 1.
size_t dtypeSize(DType t);
/// The language's spelling: "f64", "f32", "bf16", "f16", "i64", "i32", "bool".
const char *dtypeName(DType t);
/// numpy's spelling, for messages about .npy files: "float64" ... "bool".
const char *dtypeNumpyName(DType t);
/// Parses the language's spelling.
std::optional<DType> parseDType(std::string_view name);
bool isFloatingPoint(DType t);

} // namespace sinter::rt

#endif // SINTER_RT_DTYPE_H
