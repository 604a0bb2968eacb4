//===- NcclCommunicator.h - Collectives across GPUs (NCCL) --------*- C++ -*-===//
//
// Linked into CUDA programs only: the entry point is weak, null in a CPU
// program.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DIST_NCCLCOMMUNICATOR_H
#define SINTER_RT_DIST_NCCLCOMMUNICATOR_H

#include "dist/Bootstrap.h"

namespace sinter::rt {

/// The communicator of a CUDA run of several ranks. A collective on device
/// memory (gradient buckets, shards) runs on NCCL on this rank's GPU
/// (LOCAL_RANK), on NCCL's own stream, after the work queued on
/// `workQueue` (the step's cudaStream_t) when it starts; its Pending
/// returns once it is done, so work queued after the wait reads its result.
/// A collective on host memory (counts, metrics, the host copies of the
/// parameters at start, barriers) runs on `host` (Gloo). NCCL's unique id
/// goes from rank 0 to the others through `host`. An NCCL collective that
/// makes no progress for `timeoutSeconds` aborts NCCL with an error naming
/// the rank, never a hang.
Expected<std::unique_ptr<Communicator>>
connectNccl(const WorldInfo &world, std::unique_ptr<Communicator> host,
            void *workQueue, int timeoutSeconds) __attribute__((weak));

} // namespace sinter::rt

#endif // SINTER_RT_DIST_NCCLCOMMUNICATOR_H
