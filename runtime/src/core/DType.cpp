//===- DType.cpp - numpy's names of the element types ---------------------===//

#include "sinter/rt/DType.h"

namespace sinter::rt {

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

} // namespace sinter::rt
