//===- DType.h - The element types of the Sinter language --------*- C++ -*-===//
//
// The one definition of the seven element types of LANGUAGE.md section 4,
// shared by the compiler (the shape rules) and the runtime (data, checkpoints,
// initialisers). Their numbers are sinter_plan.proto's DType values, which
// is how a step's plan names them. All are stored little-endian; bool is one
// byte holding 0 or 1, bf16 is the upper half of an IEEE float32.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_CONTRACT_DTYPE_H
#define SINTER_CONTRACT_DTYPE_H

#include <cstddef>
#include <optional>
#include <string_view>

namespace sinter {

enum class DType { F64 = 0, F32 = 1, BF16 = 2, F16 = 3, I64 = 4, I32 = 5, Bool = 6 };

inline constexpr DType kAllDTypes[] = {DType::F64, DType::F32, DType::BF16, DType::F16,
                                       DType::I64, DType::I32, DType::Bool};

/// Bytes per element: 8, 4, 2, 2, 8, 4, 1.
constexpr size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::Bool:
    return 1;
  }
  return 0;
}

/// The language's spelling: "f64", "f32", "bf16", "f16", "i64", "i32", "bool".
constexpr const char *dtypeName(DType t) {
  switch (t) {
  case DType::F64: return "f64";
  case DType::F32: return "f32";
  case DType::BF16: return "bf16";
  case DType::F16: return "f16";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::Bool: return "bool";
  }
  return "?";
}

/// Parses the language's spelling.
constexpr std::optional<DType> parseDType(std::string_view name) {
  for (DType t : kAllDTypes)
    if (name == dtypeName(t))
      return t;
  return std::nullopt;
}

constexpr bool isFloatingPoint(DType t) {
  return t == DType::F64 || t == DType::F32 || t == DType::BF16 || t == DType::F16;
}
constexpr bool isInteger(DType t) { return t == DType::I64 || t == DType::I32; }

} // namespace sinter

#endif // SINTER_CONTRACT_DTYPE_H
