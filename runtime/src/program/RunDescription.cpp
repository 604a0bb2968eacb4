//===- RunDescription.cpp - What a run says it does -----------------------===//

#include "program/RunDescription.h"

#include <cstdio>
#include <utility>
#include <vector>

namespace sinter::rt {
namespace {

using Parallel = config::TrainConfig::Parallel;

/// What a strategy shards, or "" for a replica on every rank.
const char *shardedState(Parallel::Strategy s) {
  switch (s) {
  case Parallel::ZERO1: return "optimizer state";
  case Parallel::ZERO2: return "gradients and optimizer state";
  case Parallel::FULL_SHARD: return "parameters, gradients and optimizer state";
  default: return "";
  }
}

std::string mib(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", double(bytes) / (1 << 20));
  return text;
}

std::string ranks(int n) { return std::to_string(n) + (n == 1 ? " rank" : " ranks"); }

} // namespace

std::string describeParallelism(const config::TrainConfig &cfg, Communicator &comm) {
  Parallel::Strategy strategy = cfg.parallel().strategy();
  std::string text = Parallel::Strategy_Name(strategy) + " on " + ranks(comm.size());
  if (std::string what = shardedState(strategy); !what.empty())
    text += ": " + what + " sharded over " + ranks(comm.size());
  else if (comm.size() > 1)
    text += ": a full replica on each";
  return text + "; collectives: " + comm.engine();
}

std::string describePlanMemory(const StepPlan &plan, const Device &device) {
  const plan::PlanMemory &m = plan.memory;
  return "memory per rank, from the plan: " + mib(m.total()) + " MiB " +
         (device.hostVisible() ? "of host memory" : "on the GPU") +
         " (parameters and states " + mib(m.params) + ", gradients " +
         mib(m.gradients) + ", optimizer state " + mib(m.optimizer) +
         ", activations and temporaries " + mib(m.activations) +
         ", communication buffers " + mib(m.communication) + ", inputs and outputs " +
         mib(m.io) + ")";
}

std::string describeCommunication(const CommunicationTimes &times, bool overlap,
                                  double trainingSeconds) {
  double n = double(times.steps);
  auto each = [&](uint64_t count, const char *what) {
    char text[64];
    std::snprintf(text, sizeof text, "%.1f %s", double(count) / n, what);
    return std::string(text);
  };
  std::vector<std::string> ran;
  for (auto [count, what] : {std::pair{times.allReduces, "all-reduces"},
                             {times.reduceScatters, "reduce-scatters"},
                             {times.allGathers, "all-gathers"}})
    if (count)
      ran.push_back(each(count, what));
  std::string kinds = ran.empty() ? "no collectives" : ran[0];
  for (size_t i = 1; i < ran.size(); ++i)
    kinds += (i + 1 == ran.size() ? " and " : ", ") + ran[i];
  // Compiled with parallel.overlap false, the sums start after backward:
  // the few microseconds between the first and the end are not overlap.
  char when[96] = "all started after backward (parallel.overlap false)";
  if (overlap)
    std::snprintf(when, sizeof when, "the first gradient sum started %.3f ms before the "
                  "end of backward", 1e3 * times.overlappedSeconds / n);
  char text[320];
  std::snprintf(text, sizeof text,
                "communication: %.3f ms per step (%llu steps, %.3f ms each); per step %s, "
                "%s; %.3f ms waited after it",
                1e3 * (times.overlappedSeconds + times.waitedSeconds) / n,
                (unsigned long long)times.steps, 1e3 * trainingSeconds / n, kinds.c_str(),
                when, 1e3 * times.waitedSeconds / n);
  return text;
}

} // namespace sinter::rt
