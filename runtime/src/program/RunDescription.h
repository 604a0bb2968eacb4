//===- RunDescription.h - What a run says it does -------------------*- C++ -*-===//
//
// The lines a run starts and ends with, beside the step reports: the
// strategy, what it shards over how many ranks and which engine carries the
// collectives; what the plan allocates per rank; and, at the end, how many
// collectives of each kind a step ran and how long they took.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_RUNDESCRIPTION_H
#define SINTER_RT_PROGRAM_RUNDESCRIPTION_H

#include "dist/Communicator.h"
#include "program/StepPlan.h"
#include "program/TrainStep.h"
#include "runtime/contract/sinter_config.pb.h"

#include <string>

namespace sinter::rt {

/// "ZERO2 on 2 ranks: gradients and optimizer state sharded over 2 ranks;
/// collectives: Gloo over TCP".
std::string describeParallelism(const config::TrainConfig &cfg, Communicator &comm);

/// "memory per rank, from the plan: 12.5 MiB on the GPU (parameters and
/// states 1.2, gradients 0.6, ...)", or "of host memory" where `device`'s
/// buffers are the host's.
std::string describePlanMemory(const StepPlan &plan, const Device &device);

/// The end-of-run line: time per step in collectives, how many of each kind
/// a step ran, and how they overlapped the backward pass.
std::string describeCommunication(const CommunicationTimes &times, bool overlap,
                                  double trainingSeconds);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_RUNDESCRIPTION_H
