//===- DType.cpp - The element types of the Sinter language ---------------===//

#include "sinter/rt/DType.h"

namespace sinter::rt {

size_t dtypeSize(DType t) {
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

const char *dtypeName(DType t) {
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

const char *dtypeNumpyName(DType t) {
  switch (t) {
  case DType::F64: return "float64";
  case DType::F32: return "float32";
  case DType::BF16: return "bfloat16";
  case DType::F16: return "float16";
  case DType::I64: return "int64";
  case DType::I32: return "int32";
  case DType::Bool: return "bool";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view name) {
  for (DType t : {DType::F64, DType::F32, DType::BF16, DType::F16, DType::I64,
                  DType::I32, DType::Bool})
    if (name == dtypeName(t))
      return t;
  return std::nullopt;
}

bool isFloatingPoint(DType t) {
  return t == DType::F64 || t == DType::F32 || t == DType::BF16 ||
         t == DType::F16;
}

} // namespace sinter::rt
