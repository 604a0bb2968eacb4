//===- TrainStep.h - Running a compiled train step ----------------------===//
//
// A compiled train step loops over its micro-batches itself and asks the
// runtime for each one through abi.h's sinter_rt_* functions. This file holds
// what those functions answer from: the micro-batches of the step being run,
// the global batch, and the seed, step and rank its random keys come from.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_TRAINSTEP_H
#define SINTER_RT_PROGRAM_TRAINSTEP_H

#include "data/BatchSource.h"
#include "dist/Communicator.h"
#include "observe/StepEvents.h"
#include "program/Optimizer.h"
#include "program/StepPlan.h"

#include <chrono>
#include <string>
#include <vector>

namespace sinter::rt {

using StepFn = void (*)(void **);

/// Where a step's gradient communication happened in time, summed over
/// steps: how long before the end of the backward pass the first bucket
/// started, and how long the step then waited for the rest.
struct CommunicationTimes {
  uint64_t steps = 0;
  /// The step's collectives of each kind: the buckets' all-reduces, and a
  /// sharded strategy's reduce-scatters and all-gathers.
  uint64_t allReduces = 0, reduceScatters = 0, allGathers = 0;
  double overlappedSeconds = 0; ///< first gradient sum's start to end of backward
  double waitedSeconds = 0;     ///< end of backward to the last one done
};

struct TrainStepWorld {
  /// One entry per micro-batch of this rank (k), each one tensor per input.
  std::vector<std::vector<HostTensor>> microBatches;
  uint64_t globalBatch = 0; ///< samples of the step over all ranks
  uint64_t seed = 0;
  uint64_t step = 0; ///< 0-based optimizer step
  uint64_t rank = 0;
  /// Sums gradients and counts over the ranks; null when no collective
  /// runs (one process without an engine).
  Communicator *comm = nullptr;
  CommunicationTimes *times = nullptr; ///< optional
  StepEvents *events = nullptr;        ///< optional
  /// What the step's update reads (sinter_rt_hyperparameter).
  UpdateScalars update = gradientsOnly();
};

/// Runs the train step `fn` on `buffers` with `world` answering its calls,
/// on this thread. Fails if loading an input failed inside the step.
Status runTrainStep(StepFn fn, const StepPlan &plan, BufferSet &buffers,
                    const TrainStepWorld &world);

/// The same for any step: an eval step's inputs are in its buffers
/// already, and it calls the runtime only to gather sharded parameters.
Status runStep(StepFn fn, const StepPlan &plan, BufferSet &buffers,
               const TrainStepWorld &world);

/// The random key of one micro-batch (abi.h): Philox of (step, micro-batch,
/// rank) under the seed.
int64_t microBatchRandomKey(uint64_t seed, uint64_t step, uint64_t micro,
                            uint64_t rank);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_TRAINSTEP_H
