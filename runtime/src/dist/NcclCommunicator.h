//===- NcclCommunicator.h - Collectives across GPUs (NCCL) --------*- C++ -*-===//
#ifndef SINTER_RT_DIST_NCCLCOMMUNICATOR_H
#define SINTER_RT_DIST_NCCLCOMMUNICATOR_H

#include "dist/Bootstrap.h"

namespace sinter::rt {

/// The communicator of a CUDA run: NCCL on this rank's GPU (LOCAL_RANK),
/// with NCCL's unique id handed from rank 0 to the others through the same
/// TCP rendezvous as Gloo's. Collectives take device pointers and run on
/// the communicator's own stream; a Pending waits for them, and a
/// collective that makes no progress for `timeoutSeconds` aborts the
/// communicator with an error rather than hang.
Expected<std::unique_ptr<Communicator>> connectNccl(const WorldInfo &world,
                                                    int timeoutSeconds);

} // namespace sinter::rt

#endif // SINTER_RT_DIST_NCCLCOMMUNICATOR_H
