//===- RunCollectives.h - Which engine carries a run's collectives -*- C++ -*-===//
//
// parallel.collectives, the world and the step's device decide:
//   - one process: NCCL on CUDA (AUTO or NCCL), its calls for real; else
//     none (every collective the identity, which the step skips);
//   - several CPU ranks: Gloo over TCP;
//   - several CUDA ranks, AUTO or NCCL: NCCL between their GPUs, host
//     values over Gloo;
//   - several CUDA ranks, GLOO: Gloo through pinned host buffers, so that
//     they may share a GPU.
// SINTER_STAGED_COLLECTIVES=1 runs a CPU program's collectives through
// host buffers and a copy thread as a CUDA rank's would under GLOO: the
// staged path, checked where there is no GPU.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_RUNCOLLECTIVES_H
#define SINTER_RT_PROGRAM_RUNCOLLECTIVES_H

#include "device/Device.h"
#include "dist/Bootstrap.h"
#include "runtime/contract/sinter_config.pb.h"

namespace sinter::rt {

Expected<std::unique_ptr<Communicator>>
connectRun(const config::TrainConfig &cfg, const WorldInfo &world, Device &device);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_RUNCOLLECTIVES_H
