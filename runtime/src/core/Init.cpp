//===- Init.cpp - Parameter initialisers (LANGUAGE.md section 6) ----------===//
//
// The recipe is in Init.h. Compiled with -ffp-contract=off (see DetMath.h).
//
//===----------------------------------------------------------------------===//

#include "core/Init.h"

#include "core/DetMath.h"
#include "core/HalfFloat.h"
#include "core/Philox.h"
#include "support/Format.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace sinter::rt {
namespace {

constexpr double kTwoPowMinus53 = 0x1p-53;

struct KindInfo {
  InitKind kind;
  const char *name;
  const char *signature;
  size_t minArgs, maxArgs;
};

constexpr KindInfo kKinds[] = {
    {InitKind::Zeros, "zeros", "zeros", 0, 0},
    {InitKind::Ones, "ones", "ones", 0, 0},
    {InitKind::Constant, "constant", "constant(v)", 1, 1},
    {InitKind::Normal, "normal", "normal(mean, std)", 2, 2},
    {InitKind::Uniform, "uniform", "uniform(lo, hi)", 2, 2},
    {InitKind::TruncNormal, "trunc_normal", "trunc_normal(mean, std, a, b)", 4, 4},
    {InitKind::KaimingUniform, "kaiming_uniform", "kaiming_uniform(fan_in, a=0)", 1, 2},
    {InitKind::KaimingNormal, "kaiming_normal", "kaiming_normal(fan_in, gain)", 2, 2},
    {InitKind::XavierUniform, "xavier_uniform", "xavier_uniform(fan_in, fan_out)", 2, 2},
};

const KindInfo &info(InitKind k) {
  for (const KindInfo &i : kKinds)
    if (i.kind == k)
      return i;
  return kKinds[0];
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  // The shortest spelling that reads back, for readable messages.
  for (int p = 1; p <= 17; ++p) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.*g", p, v);
    if (std::strtod(b, nullptr) == v)
      return b;
  }
  return buf;
}

/// The distribution after argument checks: every random initialiser is a
/// uniform, a normal or a truncated normal.
struct Plan {
  enum { Constant, Uniform, Normal, TruncNormal } family = Constant;
  double c = 0;           // Constant
  double lo = 0, hi = 0;  // Uniform
  double mean = 0, std = 0, a = 0, b = 0; // Normal, TruncNormal
};

Status makePlan(const std::string &where, InitKind kind, const std::vector<double> &args,
                Plan &plan) {
  const KindInfo &ki = info(kind);
  if (args.size() < ki.minArgs || args.size() > ki.maxArgs)
    return Status::error(where + ki.signature + " takes " +
                         (ki.minArgs == ki.maxArgs
                              ? std::to_string(ki.minArgs)
                              : std::to_string(ki.minArgs) + " or " + std::to_string(ki.maxArgs)) +
                         (ki.maxArgs == 1 ? " argument" : " arguments") + ", got " +
                         std::to_string(args.size()));
  auto bad = [&](const std::string &what) {
    return Status::error(where + ki.signature + ": " + what);
  };
  for (size_t i = 0; i < args.size(); ++i) {
    // trunc_normal's cut-offs may be infinite (no cut-off on that side).
    bool mayBeInfinite = kind == InitKind::TruncNormal && i >= 2;
    if (std::isnan(args[i]) || (!mayBeInfinite && std::isinf(args[i])))
      return bad("argument " + std::to_string(i + 1) + " is " + num(args[i]) +
                 "; expected a finite number");
  }
  switch (kind) {
  case InitKind::Zeros:
    plan.c = 0;
    return Status::success();
  case InitKind::Ones:
    plan.c = 1;
    return Status::success();
  case InitKind::Constant:
    plan.c = args[0];
    return Status::success();
  case InitKind::Normal:
    if (args[1] < 0)
      return bad("std is " + num(args[1]) + "; expected std >= 0");
    plan.family = Plan::Normal;
    plan.mean = args[0];
    plan.std = args[1];
    return Status::success();
  case InitKind::Uniform:
    if (!(args[0] < args[1]))
      return bad("lo = " + num(args[0]) + " and hi = " + num(args[1]) + "; expected lo < hi");
    if (std::isinf(args[1] - args[0]))
      return bad("hi - lo overflows; expected a range below 1.8e308");
    plan.family = Plan::Uniform;
    plan.lo = args[0];
    plan.hi = args[1];
    return Status::success();
  case InitKind::TruncNormal:
    if (!(args[1] > 0))
      return bad("std is " + num(args[1]) + "; expected std > 0");
    if (!(args[2] < args[3]))
      return bad("a = " + num(args[2]) + " and b = " + num(args[3]) +
                 "; expected a < b (absolute cut-offs, as in PyTorch's trunc_normal_)");
    plan.family = Plan::TruncNormal;
    plan.mean = args[0];
    plan.std = args[1];
    plan.a = args[2];
    plan.b = args[3];
    return Status::success();
  case InitKind::KaimingUniform: {
    if (!(args[0] > 0))
      return bad("fan_in is " + num(args[0]) + "; expected fan_in > 0");
    double a = args.size() > 1 ? args[1] : 0.0;
    double bound = std::sqrt(6.0 / ((1.0 + a * a) * args[0]));
    plan.family = Plan::Uniform;
    plan.lo = -bound;
    plan.hi = bound;
    return Status::success();
  }
  case InitKind::KaimingNormal:
    if (!(args[0] > 0))
      return bad("fan_in is " + num(args[0]) + "; expected fan_in > 0");
    if (args[1] < 0)
      return bad("gain is " + num(args[1]) + "; expected gain >= 0");
    plan.family = Plan::Normal;
    plan.mean = 0;
    plan.std = args[1] / std::sqrt(args[0]);
    return Status::success();
  case InitKind::XavierUniform: {
    if (!(args[0] > 0) || !(args[1] > 0))
      return bad("fan_in = " + num(args[0]) + " and fan_out = " + num(args[1]) +
                 "; expected both > 0");
    double bound = std::sqrt(6.0 / (args[0] + args[1]));
    plan.family = Plan::Uniform;
    plan.lo = -bound;
    plan.hi = bound;
    return Status::success();
  }
  }
  return bad("unknown initialiser");
}

/// Stores a double constant as `dtype`; checks it is representable where
/// rounding would change its meaning (integers, bool).
Status constantBytes(const std::string &where, double c, DType dtype, uint8_t bytes[8]) {
  switch (dtype) {
  case DType::F64:
    std::memcpy(bytes, &c, 8);
    return Status::success();
  case DType::F32: {
    float f = (float)c;
    std::memcpy(bytes, &f, 4);
    return Status::success();
  }
  case DType::F16: {
    uint16_t h = doubleToHalf(c);
    std::memcpy(bytes, &h, 2);
    return Status::success();
  }
  case DType::BF16: {
    uint16_t h = doubleToBFloat16(c);
    std::memcpy(bytes, &h, 2);
    return Status::success();
  }
  case DType::I64:
    if (!(c == std::floor(c) && c >= -0x1p63 && c < 0x1p63))
      return Status::error(where + "the value " + num(c) + " is not a whole number in the range of i64");
    {
      int64_t v = (int64_t)c;
      std::memcpy(bytes, &v, 8);
    }
    return Status::success();
  case DType::I32:
    if (!(c == std::floor(c) && c >= -2147483648.0 && c <= 2147483647.0))
      return Status::error(where + "the value " + num(c) + " is not a whole number in the range of i32");
    {
      int32_t v = (int32_t)c;
      std::memcpy(bytes, &v, 4);
    }
    return Status::success();
  case DType::Bool:
    if (c != 0 && c != 1)
      return Status::error(where + "the value " + num(c) + " is not a bool; expected 0 or 1");
    bytes[0] = c != 0;
    return Status::success();
  }
  return Status::error(where + "unknown element type");
}

/// Below `hi` in the stored precision (the uniform family's half-open range).
double belowHi(double r, double hi) { return r >= hi ? std::nextafter(hi, -INFINITY) : r; }
float belowHi(float r, float hi, float lo) {
  return r >= hi && lo < hi ? std::nextafter(hi, -INFINITY) : r;
}

template <typename T>
void fillRandom(const Plan &plan, const PhiloxStream &stream, uint64_t first, uint64_t count,
                T *out) {
  // trunc_normal's per-call constants.
  bool flip = false;
  double pa = 0, pb = 0;
  if (plan.family == Plan::TruncNormal) {
    double al = (plan.a - plan.mean) / plan.std;
    double be = (plan.b - plan.mean) / plan.std;
    flip = al + be > 0;
    if (flip) {
      double t = al;
      al = -be;
      be = -t;
    }
    pa = detmath::normalCdf(al);
    pb = detmath::normalCdf(be);
  }
  for (uint64_t j = 0; j < count; ++j) {
    std::array<uint64_t, 2> w = stream.at(first + j);
    double u = (double)(w[0] >> 11) * kTwoPowMinus53;
    double r;
    switch (plan.family) {
    case Plan::Uniform:
      r = plan.lo + (plan.hi - plan.lo) * u;
      break;
    case Plan::Normal: {
      double v = (double)((w[1] >> 11) + 1) * kTwoPowMinus53;
      double z = std::sqrt(-2.0 * detmath::log(v)) * detmath::cos2pi(u);
      r = plan.mean + plan.std * z;
      break;
    }
    case Plan::TruncNormal: {
      double z = detmath::normalQuantile(pa + (pb - pa) * u);
      if (flip)
        z = -z;
      r = plan.mean + plan.std * z;
      r = r < plan.a ? plan.a : r;
      r = r > plan.b ? plan.b : r;
      break;
    }
    default:
      r = 0;
    }
    if constexpr (std::is_same_v<T, double>) {
      out[j] = plan.family == Plan::Uniform ? belowHi(r, plan.hi) : r;
    } else {
      float f = (float)r;
      out[j] = plan.family == Plan::Uniform ? belowHi(f, (float)plan.hi, (float)plan.lo) : f;
    }
  }
}

/// The threads a random fill may use: the CPUs this process may run on,
/// at most OMP_NUM_THREADS (the share a launcher gives each rank).
unsigned fillThreads() {
  cpu_set_t allowed;
  unsigned cpus = ::sched_getaffinity(0, sizeof allowed, &allowed) == 0
                      ? unsigned(CPU_COUNT(&allowed))
                      : std::max(1u, std::thread::hardware_concurrency());
  if (const char *omp = std::getenv("OMP_NUM_THREADS")) {
    char *end = nullptr;
    long n = std::strtol(omp, &end, 10);
    if (end != omp && n > 0)
      cpus = std::min(cpus, unsigned(n));
  }
  return std::max(1u, cpus);
}

/// fillRandom over chunks on several threads: each element depends only on
/// its index, so the values are the same as on one.
template <typename T>
void fillRandomInParallel(const Plan &plan, const PhiloxStream &stream, uint64_t first,
                          uint64_t count, T *out) {
  constexpr uint64_t kChunk = uint64_t(1) << 16;
  uint64_t chunks = (count + kChunk - 1) / kChunk;
  unsigned threads = unsigned(std::min<uint64_t>(fillThreads(), chunks));
  if (threads <= 1) {
    fillRandom(plan, stream, first, count, out);
    return;
  }
  std::atomic<uint64_t> next{0};
  auto work = [&] {
    for (uint64_t at; (at = next.fetch_add(kChunk)) < count;)
      fillRandom(plan, stream, first + at, std::min(kChunk, count - at), out + at);
  };
  std::vector<std::thread> helpers;
  for (unsigned t = 1; t < threads; ++t)
    helpers.emplace_back(work);
  work();
  for (std::thread &helper : helpers)
    helper.join();
}

} // namespace

const char *initKindName(InitKind k) { return info(k).name; }

std::optional<InitKind> parseInitKind(std::string_view name) {
  for (const KindInfo &i : kKinds)
    if (name == i.name)
      return i.kind;
  return std::nullopt;
}

Status fill(std::string_view name, InitKind init, const std::vector<double> &args, DType dtype,
            const Shape &shape, uint64_t seed, uint64_t firstElement, uint64_t count, void *out) {
  std::string where = std::string(name) + ": ";
  Plan plan;
  SINTER_RT_RETURN_IF_ERROR(makePlan(where, init, args, plan));

  std::optional<uint64_t> total = numElements(shape);
  if (!total)
    return Status::error(where + "shape " + formatShape(shape) + " has more elements than fit in 64 bits");
  std::optional<uint64_t> end = checkedAdd(firstElement, count);
  if (!end || *end > *total)
    return Status::error(where + "elements [" + std::to_string(firstElement) + ", " +
                         (end ? std::to_string(*end) : std::string("2^64 or more")) +
                         ") are outside the tensor " + formatShape(shape) + " of " +
                         std::to_string(*total) + " elements");
  if (count == 0)
    return Status::success();
  if (!out)
    return Status::error(where + "no output buffer");

  if (plan.family == Plan::Constant) {
    uint8_t bytes[8];
    SINTER_RT_RETURN_IF_ERROR(constantBytes(where + info(init).name + ": ", plan.c, dtype, bytes));
    size_t size = dtypeSize(dtype);
    uint8_t *o = static_cast<uint8_t *>(out);
    for (uint64_t j = 0; j < count; ++j)
      std::memcpy(o + j * size, bytes, size);
    return Status::success();
  }

  PhiloxStream stream{seed, fnv1a64(name)};
  switch (dtype) {
  case DType::F64:
    fillRandomInParallel(plan, stream, firstElement, count, static_cast<double *>(out));
    return Status::success();
  case DType::F32:
    fillRandomInParallel(plan, stream, firstElement, count, static_cast<float *>(out));
    return Status::success();
  default:
    return Status::error(where + info(init).name + " fills f32 or f64 tensors, not " +
                         dtypeName(dtype) + "; random initialisers are for parameters " +
                         "(use zeros, ones or constant for a " + dtypeName(dtype) + " state)");
  }
}

} // namespace sinter::rt
