//===- StepEvents.h - When the parts of a train step ran --------*- C++ -*-===//
//
// What a step records for the trace (observe/Trace.h): the runtime fills
// it as the step runs, the trace writes it; neither needs the other.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_OBSERVE_STEPEVENTS_H
#define SINTER_RT_OBSERVE_STEPEVENTS_H

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sinter::rt {

/// When the parts of one train step ran, for traces.
struct StepEvents {
  using Clock = std::chrono::steady_clock;
  /// Each micro-batch as it began (its index, the time); it ran until the
  /// next one began or the backward pass ended.
  std::vector<std::pair<int64_t, Clock::time_point>> microBatches;
  Clock::time_point backwardEnd; ///< the gradients were final
  Clock::time_point summed;      ///< and summed over the ranks
  Clock::time_point end;         ///< the step (with its update) returned
  struct Collective {
    std::string name;
    int64_t bucket = -1; ///< its bucket, or -1 for a sharded collective
    Clock::time_point begin, end;
  };
  std::vector<Collective> collectives;
};

} // namespace sinter::rt

#endif // SINTER_RT_OBSERVE_STEPEVENTS_H
