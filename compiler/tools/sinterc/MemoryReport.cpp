//===- MemoryReport.cpp - Per-rank memory of each strategy, from the plans ===//

#include "compiler/tools/sinterc/MemoryReport.h"

#include "runtime/contract/sinter_plan.pb.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace sinter {
namespace {

/// How the runtime allocates a buffer (sinter_plan.proto): in 64-byte units.
uint64_t allocated(uint64_t bytes) { return (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64; }

uint64_t elementBytes(plan::DType t) {
  switch (t) {
  case plan::F64: case plan::I64: return 8;
  case plan::F32: case plan::I32: return 4;
  case plan::BF16: case plan::F16: return 2;
  case plan::BOOL: return 1;
  }
  return 4;
}

uint64_t elements(const plan::Buffer &b) {
  uint64_t n = 1;
  for (int64_t d : b.shape())
    n *= uint64_t(d);
  return n;
}

/// What one rank allocates for a train step, by use.
struct Breakdown {
  uint64_t params = 0, gradients = 0, optimizer = 0, activations = 0,
           communication = 0, io = 0;
  uint64_t paramElements = 0; ///< Ψ
  int moments = 0;            ///< per parameter
  uint64_t modelState() const { return params + gradients + optimizer; }
  uint64_t total() const {
    return modelState() + activations + communication + io;
  }
};

Breakdown breakdown(const plan::Step &step) {
  Breakdown out;
  for (const plan::Buffer &b : step.buffers()) {
    uint64_t bytes = allocated(elements(b) * elementBytes(b.dtype()));
    switch (b.kind()) {
    case plan::PARAM: {
      // Ψ counts whole parameters, of which a FULL_SHARD rank holds shards.
      uint64_t whole = 1;
      for (int64_t d : b.global_shape())
        whole *= uint64_t(d);
      out.paramElements += b.global_shape_size() > 0 ? whole : elements(b);
      [[fallthrough]];
    }
    case plan::STATE:
      out.params += bytes;
      break;
    case plan::GRADIENT:
    case plan::GRADIENT_SLICES:
      out.gradients += bytes;
      break;
    case plan::OPTIMIZER_STATE:
      out.optimizer += bytes;
      break;
    case plan::WORKSPACE: {
      uint64_t comm = std::min<uint64_t>(uint64_t(step.communication_bytes()), bytes);
      out.communication = comm;
      out.activations = bytes - comm;
      break;
    }
    default:
      out.io += bytes;
    }
  }
  if (step.optimizer() == "adamw")
    out.moments = 2;
  else if (step.optimizer() == "sgd_momentum")
    out.moments = 1;
  return out;
}

std::string mib(uint64_t bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << double(bytes) / (1 << 20) << " MiB";
  return os.str();
}

/// DOMAIN.md 5's model-state bytes per rank, f32 throughout: 4 bytes per
/// parameter, per gradient and per moment, sharded as the strategy says.
std::string formula(const std::string &strategy, int moments) {
  std::string k = std::to_string(4 * moments);
  if (strategy == "DDP")
    return std::to_string(8 + 4 * moments) + "Ψ";
  if (strategy == "ZERO1")
    return "8Ψ + " + k + "Ψ/W";
  if (strategy == "ZERO2")
    return "4Ψ + " + std::to_string(4 + 4 * moments) + "Ψ/W";
  return std::to_string(8 + 4 * moments) + "Ψ/W";
}

double formulaBytes(const std::string &strategy, int moments, double psi, double w) {
  double k = 4.0 * moments;
  if (strategy == "DDP")
    return (8 + k) * psi;
  if (strategy == "ZERO1")
    return 8 * psi + k * psi / w;
  if (strategy == "ZERO2")
    return 4 * psi + (4 + k) * psi / w;
  return (8 + k) * psi / w;
}

} // namespace

std::optional<uint64_t> parseByteSize(const std::string &text) {
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v >= 0) || !std::isfinite(v))
    return std::nullopt;
  std::string unit(end);
  static const std::pair<const char *, double> units[] = {
      {"", 1},          {"B", 1},          {"KiB", 1024.0},  {"MiB", 1048576.0},
      {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}, {"KB", 1e3}, {"MB", 1e6},
      {"GB", 1e9},      {"TB", 1e12}};
  for (auto [name, scale] : units)
    if (unit == name)
      return uint64_t(v * scale);
  return std::nullopt;
}

void printMemoryReport(const std::vector<StrategyPlan> &columns, int64_t world,
                       const std::optional<DeviceMemory> &device, std::ostream &os) {
  std::vector<std::optional<Breakdown>> parts;
  std::string model;
  std::optional<Breakdown> any;
  for (const StrategyPlan &c : columns) {
    std::optional<Breakdown> b;
    if (c.plan) {
      plan::Step step;
      step.ParseFromString(*c.plan);
      b = breakdown(step);
      model = step.model();
      any = b;
    }
    parts.push_back(b);
  }
  os << "memory per rank of the train step of '" << model << "' on " << world
     << " rank" << (world == 1 ? "" : "s") << ", from the compiled plans\n";
  if (any)
    os << "Ψ = " << any->paramElements << " parameters; " << any->moments
       << " f32 moment" << (any->moments == 1 ? "" : "s")
       << " each; everything f32\n";
  os << "\n";
  const int label = 30, width = 16;
  auto row = [&](const std::string &name, auto cell) {
    os << std::left << std::setw(label) << name;
    for (size_t i = 0; i < columns.size(); ++i)
      os << std::right << std::setw(width) << (parts[i] ? cell(*parts[i], i) : "not built");
    os << "\n";
  };
  os << std::left << std::setw(label) << "";
  for (const StrategyPlan &c : columns)
    os << std::right << std::setw(width) << c.strategy;
  os << "\n";
  row("parameters and states", [](const Breakdown &b, size_t) { return mib(b.params); });
  row("gradients", [](const Breakdown &b, size_t) { return mib(b.gradients); });
  row("optimizer state", [](const Breakdown &b, size_t) { return mib(b.optimizer); });
  row("activations and temporaries",
      [](const Breakdown &b, size_t) { return mib(b.activations); });
  row("communication buffers",
      [](const Breakdown &b, size_t) { return mib(b.communication); });
  row("inputs and outputs", [](const Breakdown &b, size_t) { return mib(b.io); });
  row("total", [](const Breakdown &b, size_t) { return mib(b.total()); });
  os << "\n";
  row("model state", [](const Breakdown &b, size_t) { return mib(b.modelState()); });
  row("  DOMAIN.md 5 (f32)", [&](const Breakdown &b, size_t i) {
    return formula(columns[i].strategy, b.moments);
  });
  row("  = ", [&](const Breakdown &b, size_t i) {
    return mib(uint64_t(formulaBytes(columns[i].strategy, b.moments,
                                     double(b.paramElements), double(world))));
  });
  if (device)
    row("fits in " + device->text, [&](const Breakdown &b, size_t) {
      return std::string(b.total() <= device->bytes ? "yes" : "no");
    });
  for (size_t i = 0; i < columns.size(); ++i)
    if (!parts[i])
      os << columns[i].strategy << ": " << columns[i].missing << "\n";
  os << "Exact for what the runtime allocates from the plan (each buffer in 64-byte "
        "units). Not in the plan: the program's code and libraries, oneDNN's own "
        "scratchpad, cuBLAS's workspace on CUDA, prefetched batches, and the eval "
        "step's buffers when the run evaluates.\n";
}

} // namespace sinter
