//===- NcclInternal.h - What the NCCL files share ---------------*- C++ -*-===//
//
// Private to NcclCommunicator.cpp (the communicator and its watchdog) and
// NcclConnect.cpp (NCCL's set-up and connectNccl).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DIST_NCCLINTERNAL_H
#define SINTER_RT_DIST_NCCLINTERNAL_H

#include "dist/Bootstrap.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace sinter::rt {

using Clock = std::chrono::steady_clock;

/// How often the watchdog looks at a collective in flight (more often once
/// it runs, for the host's waits), and after how long without progress it
/// asks the rendezvous whether a rank left.
constexpr auto kPollInterval = std::chrono::microseconds(200);
constexpr auto kPollWhileQueued = std::chrono::milliseconds(1);
constexpr auto kAskAfter = std::chrono::seconds(1);

/// "rank R of N", which every error names.
std::string where(const WorldInfo &w);

/// The communicator whose collectives run on NCCL's `comm`, on `stream`
/// after the work the step queued on `compute`, each followed by a watchdog
/// with a deadline of `timeoutSeconds`; `lostPeer` names a rank the
/// rendezvous saw leave (NcclCommunicator.cpp).
std::unique_ptr<Communicator>
makeNcclCommunicator(WorldInfo world, int gpu, ncclComm_t comm, cudaStream_t stream,
                     cudaStream_t compute, int timeoutSeconds,
                     std::function<std::string()> lostPeer);

} // namespace sinter::rt

#endif // SINTER_RT_DIST_NCCLINTERNAL_H
