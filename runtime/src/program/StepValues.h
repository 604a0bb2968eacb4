//===- StepValues.h - What a train step returned, over all ranks -*- C++ -*-===//
//
// After each step the host reads its loss, metrics, gradient norm and
// non-finite flag, sums them (and the new values of the states) over the
// ranks so that every rank decides alike, and stops the run on a value
// that is not finite, naming it.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_STEPVALUES_H
#define SINTER_RT_PROGRAM_STEPVALUES_H

#include "dist/Communicator.h"
#include "program/StepPlan.h"

#include <optional>
#include <string>
#include <vector>

namespace sinter::rt {

/// What one train step returned, in f64, over all ranks.
struct StepValues {
  double loss = 0;
  std::vector<double> metrics;
  double gradNorm = 0;
  double nonFinite = 0; ///< summed over ranks: how many saw one
};

/// Where a train step's plan keeps what it returns.
class StepOutputs {
public:
  explicit StepOutputs(const StepPlan &plan);
  const std::vector<std::string> &metricNames() const { return metrics; }
  /// Step `step`'s (0-based) values over all ranks; an error naming what
  /// was not finite, in which case the step changed no parameter.
  Expected<StepValues> read(Communicator &comm, BufferSet &buffers, int64_t step) const;
  /// States move once per step, to the mean the step computed (DOMAIN.md 4).
  Status moveStates(BufferSet &buffers) const;

private:
  Status reduce(Communicator &comm, BufferSet &buffers, StepValues &values) const;

  const StepPlan &plan;
  size_t loss = 0;
  std::vector<size_t> metricBuffers, stateOut;
  std::vector<std::string> metrics;
  std::optional<size_t> gradNorm, nonFinite;
};

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_STEPVALUES_H
