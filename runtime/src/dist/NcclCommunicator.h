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

/// The communicator of a CUDA run whose device buffers NCCL sums, for any
/// number of ranks (one included: NCCL's calls run for real). A collective
/// on device memory (gradient buckets, shards) runs on NCCL on this rank's
/// GPU (LOCAL_RANK), on NCCL's own stream, after the work queued on
/// `workQueue` (the step's cudaStream_t) when it starts; waiting in queue
/// makes that stream wait for it on the GPU. A collective on host memory
/// (counts, metrics, the host copies of the parameters at start, barriers)
/// runs on `host` (Gloo, or the local communicator of one process). NCCL's
/// unique id goes from rank 0 to the others through `host`. NCCL's set-up
/// and every collective have a deadline of `timeoutSeconds`, a collective's
/// from when its inputs are ready on the GPU; a rank that the rendezvous
/// saw leave is named (host->lostPeer()). A failure aborts NCCL with an
/// error naming this rank and the cause, never a hang.
Expected<std::unique_ptr<Communicator>>
connectNccl(const WorldInfo &world, std::unique_ptr<Communicator> host,
            void *workQueue, int timeoutSeconds) __attribute__((weak));

} // namespace sinter::rt

#endif // SINTER_RT_DIST_NCCLCOMMUNICATOR_H
