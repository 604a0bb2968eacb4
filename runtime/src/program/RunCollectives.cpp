//===- RunCollectives.cpp - Which engine carries a run's collectives ------===//

#include "program/RunCollectives.h"

#include "dist/NcclCommunicator.h"
#include "dist/StagedCommunicator.h"
#include "dist/Timeouts.h"

#include <cstdlib>
#include <cstring>

namespace sinter::rt {
namespace {

using Parallel = config::TrainConfig::Parallel;

bool stagedOnCpu() {
  const char *v = std::getenv("SINTER_STAGED_COLLECTIVES");
  return v && *v && std::strcmp(v, "0") != 0;
}

Expected<std::unique_ptr<Communicator>> staged(std::unique_ptr<Communicator> host,
                                               Device &device, const char *via) {
  Expected<StagingQueues *> queues = device.stagingQueues();
  if (!queues.ok())
    return queues.status();
  return std::unique_ptr<Communicator>(
      createStagedCommunicator(std::move(host), **queues, via));
}

} // namespace

Expected<std::unique_ptr<Communicator>>
connectRun(const config::TrainConfig &cfg, const WorldInfo &world, Device &device) {
  bool cuda = cfg.device() == config::TrainConfig::CUDA;
  Parallel::Collectives engine = cfg.parallel().collectives();
  // A CUDA step run on the CPU (sinterc --cuda-on-host) has no NCCL.
  if (engine == Parallel::AUTO)
    engine = cuda && connectNccl ? Parallel::NCCL : Parallel::GLOO;
  if (engine == Parallel::NCCL && !cuda)
    return Status::error("parallel.collectives NCCL needs device: CUDA");
  Expected<std::unique_ptr<Communicator>> host =
      connectWorld(world, kCollectiveTimeoutSeconds);
  if (!host.ok())
    return host.status();
  if (engine == Parallel::NCCL) {
    if (!connectNccl)
      return Status::error("parallel.collectives NCCL: this program was linked without "
                           "NCCL's communicator (sinterc --cuda-on-host runs the step on "
                           "the CPU); use GLOO");
    return connectNccl(world, host.take(), device.workQueue(), kCollectiveTimeoutSeconds);
  }
  if (world.size == 1)
    return host;
  if (cuda)
    return staged(host.take(), device, "pinned host buffers");
  if (stagedOnCpu())
    return staged(host.take(), device, "host buffers (SINTER_STAGED_COLLECTIVES)");
  return host;
}

} // namespace sinter::rt
