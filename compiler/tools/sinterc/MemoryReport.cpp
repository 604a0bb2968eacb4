//===- MemoryReport.cpp - Per-rank memory of each strategy, from the plans ===//

#include "compiler/tools/sinterc/MemoryReport.h"

#include "runtime/contract/PlanMemory.h"
#include "runtime/contract/sinter_plan.pb.h"

#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace sinter {
namespace {

using Breakdown = plan::PlanMemory;

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

/// The strategy a device of `device` bytes fits: the first in the table's
/// order (DDP, ZERO1, ZERO2, FULL_SHARD: the least communication first).
std::string fitting(const std::vector<StrategyPlan> &columns,
                    const std::vector<std::optional<Breakdown>> &parts,
                    const DeviceMemory &device) {
  std::optional<size_t> smallest;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (!parts[i])
      continue;
    if (parts[i]->total() <= device.bytes)
      return "with " + device.text + " per rank: " + columns[i].strategy +
             " fits (of the strategies that fit, the one that communicates least)";
    if (!smallest || parts[i]->total() < parts[*smallest]->total())
      smallest = i;
  }
  if (!smallest)
    return "with " + device.text + " per rank: no strategy was compiled";
  return "with " + device.text + " per rank: no strategy fits; the smallest, " +
         columns[*smallest].strategy + ", needs " + mib(parts[*smallest]->total()) +
         ": more ranks, a smaller batch.micro, or activations recomputed in the "
         "backward pass (recompute { mode: FULL })";
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
  std::string model, where = "cpu";
  std::optional<Breakdown> any;
  for (const StrategyPlan &c : columns) {
    std::optional<Breakdown> b;
    if (c.plan) {
      plan::Step step;
      step.ParseFromString(*c.plan);
      b = plan::planMemory(step);
      model = step.model();
      if (!step.device().empty())
        where = step.device();
      any = b;
    }
    parts.push_back(b);
  }
  bool gpu = where == "cuda";
  os << "memory per rank of the train step of '" << model << "' on " << world
     << " rank" << (world == 1 ? "" : "s") << ", from the compiled plans, "
     << (gpu ? "on each rank's GPU" : "in host memory") << "\n";
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
  // checkpoint.background's snapshot in host memory (pinned on a GPU): of
  // rank 0, which writes what no rank shards and its own shards.
  row(gpu ? "checkpoint snapshot (pinned)" : "checkpoint snapshot (host)",
      [&](const Breakdown &b, size_t) { return mib(b.params + b.optimizer); });
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
  if (device)
    os << fitting(columns, parts, *device) << "\n";
  os << "Exact for what the runtime allocates from the plan (each buffer in 64-byte "
        "units). Not in the plan: the program's code and libraries, prefetched "
        "batches, and the eval step's buffers when the run evaluates";
  if (!gpu) {
    os << ", and oneDNN's own: its scratchpad, and the copies of a library call's "
          "arguments in the layouts its kernels take (the weights; with "
          "precision.convolution WINOGRAD, the activations too).\n";
    return;
  }
  os << ". On the GPU, not in the plan either (each run's last lines give its own): "
        "CUDA's context and the kernels' module; the libraries' workspace, the "
        "largest that a call asked for (cuBLASLt's at most "
     << (plan::kCudaMatmulWorkspaceBytes >> 20)
     << " MiB, cuDNN's attention and convolutions what their plans say); input "
        "staging, 8 slots of the largest input of a micro-batch; and NCCL's buffers "
        "(NCCL_BUFFSIZE per channel and peer). With parallel.collectives GLOO, "
        "collectives go through pinned host memory instead: at most the bytes of "
        "the collectives in flight at once (the gradients, for DDP).\n";
}

} // namespace sinter
