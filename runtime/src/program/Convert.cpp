//===- Convert.cpp - Element conversion between dtypes ------------------===//

#include "program/Convert.h"

#include "core/HalfFloat.h"

#include <cmath>
#include <cstring>

namespace sinter::rt {

static double load(const uint8_t *p, DType t) {
  switch (t) {
  case DType::F64: { double v; std::memcpy(&v, p, 8); return v; }
  case DType::F32: { float v; std::memcpy(&v, p, 4); return v; }
  case DType::F16: { uint16_t v; std::memcpy(&v, p, 2); return halfToDouble(v); }
  case DType::BF16: { uint16_t v; std::memcpy(&v, p, 2); return bfloat16ToDouble(v); }
  case DType::I64: { int64_t v; std::memcpy(&v, p, 8); return double(v); }
  case DType::I32: { int32_t v; std::memcpy(&v, p, 4); return double(v); }
  case DType::Bool: return *p ? 1.0 : 0.0;
  }
  return 0;
}

static int64_t loadInt(const uint8_t *p, DType t) {
  if (t == DType::I64) { int64_t v; std::memcpy(&v, p, 8); return v; }
  if (t == DType::I32) { int32_t v; std::memcpy(&v, p, 4); return v; }
  return *p ? 1 : 0;
}

static void store(uint8_t *p, DType t, double v) {
  switch (t) {
  case DType::F64: std::memcpy(p, &v, 8); return;
  case DType::F32: { float f = float(v); std::memcpy(p, &f, 4); return; }
  case DType::F16: { uint16_t h = doubleToHalf(v); std::memcpy(p, &h, 2); return; }
  case DType::BF16: { uint16_t h = doubleToBFloat16(v); std::memcpy(p, &h, 2); return; }
  case DType::I64: { int64_t i = int64_t(v); std::memcpy(p, &i, 8); return; }
  case DType::I32: { int32_t i = int32_t(v); std::memcpy(p, &i, 4); return; }
  case DType::Bool: *p = v != 0; return;
  }
}

Status convertElements(const void *src, DType srcType, void *dst, DType dstType,
                       uint64_t count) {
  size_t srcSize = dtypeSize(srcType), dstSize = dtypeSize(dstType);
  if (srcType == dstType) {
    std::memcpy(dst, src, count * srcSize);
    return Status::success();
  }
  const uint8_t *s = static_cast<const uint8_t *>(src);
  uint8_t *d = static_cast<uint8_t *>(dst);
  bool intToInt = !isFloatingPoint(srcType) && !isFloatingPoint(dstType);
  for (uint64_t i = 0; i < count; ++i, s += srcSize, d += dstSize) {
    if (intToInt) {
      int64_t v = loadInt(s, srcType);
      if (dstType == DType::I32 && (v < INT32_MIN || v > INT32_MAX))
        return Status::error("element " + std::to_string(i) + " (" +
                             std::to_string(v) + ") does not fit in i32");
      store(d, dstType, double(v));
      if (dstType == DType::I64)
        std::memcpy(d, &v, 8); // exact beyond 2^53
      continue;
    }
    double v = load(s, srcType);
    if (!isFloatingPoint(dstType) && dstType != DType::Bool &&
        (!std::isfinite(v) || v != std::floor(v)))
      return Status::error("element " + std::to_string(i) + " (" +
                           std::to_string(v) + ") is not an integer");
    store(d, dstType, v);
  }
  return Status::success();
}

} // namespace sinter::rt
