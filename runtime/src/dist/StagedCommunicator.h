//===- StagedCommunicator.h - Device collectives through host memory -*- C++ -*-===//
//
// A collective on a device's memory (a CUDA rank's gradient bucket or
// shard) run by a host engine (Gloo): its input is copied to a host buffer
// once the step's work before it is done, the host engine runs on that
// buffer, and the result is copied back; the step's later work waits for
// that last copy on the device. The copies run on queues of their own
// (device/StagingQueues.h), so the backward pass goes on while a bucket
// travels. This is what lets several ranks share one GPU, which NCCL
// refuses, and serves clusters without NCCL.
//
// Every collective, staged or on host memory, runs on one thread in the
// order it was started, so that all ranks issue them to the host engine in
// the same order. A collective's deadline (the host engine's) starts once
// its input reached the host buffer, never while the step's earlier work
// still runs.
//
// Host buffers are kept for reuse: one is free once its collective's copy
// back is done. They never hold more than the collectives in flight at
// once; stagedBytes() says how much they hold.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DIST_STAGEDCOMMUNICATOR_H
#define SINTER_RT_DIST_STAGEDCOMMUNICATOR_H

#include "device/StagingQueues.h"
#include "dist/Communicator.h"

namespace sinter::rt {

class StagedCommunicator : public Communicator {
public:
  /// The host buffers held now, in bytes.
  virtual uint64_t stagedBytes() const = 0;
};

/// Collectives on `queues`' device memory through `host`; `via` names the
/// host buffers for engine() ("pinned host buffers").
std::unique_ptr<StagedCommunicator>
createStagedCommunicator(std::unique_ptr<Communicator> host, StagingQueues &queues,
                         std::string via);

} // namespace sinter::rt

#endif // SINTER_RT_DIST_STAGEDCOMMUNICATOR_H
