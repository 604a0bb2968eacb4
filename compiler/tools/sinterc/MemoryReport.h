//===- MemoryReport.h - Per-rank memory of each strategy, from the plans --===//
//
// `sinterc --report-memory` compiles the train step once per strategy and
// reads what each rank will allocate from the step's plan (the contract the
// runtime allocates from): parameters, gradients, optimizer state, the
// arena of activations and temporaries, the collectives' buffers in it,
// and the inputs and outputs. The numbers are the plan's, not an estimate.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_SINTERC_MEMORYREPORT_H
#define SINTER_SINTERC_MEMORYREPORT_H

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sinter {

/// One strategy's column: its train step's plan (sinter_plan.proto bytes),
/// or why there is none.
struct StrategyPlan {
  std::string strategy;
  std::optional<std::string> plan;
  std::string missing; ///< when there is no plan
};

/// A device's memory: its size as the user wrote it, and in bytes.
struct DeviceMemory {
  std::string text;
  uint64_t bytes = 0;
};

/// Prints the table for `world` ranks, and whether each strategy fits in
/// `device` when given.
void printMemoryReport(const std::vector<StrategyPlan> &columns, int64_t world,
                       const std::optional<DeviceMemory> &device, std::ostream &os);

/// "24GiB", "512MiB", "1.5e9" (bytes) as bytes; nullopt if malformed.
std::optional<uint64_t> parseByteSize(const std::string &text);

} // namespace sinter

#endif // SINTER_SINTERC_MEMORYREPORT_H
