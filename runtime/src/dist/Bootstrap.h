//===- Bootstrap.h - Who this process is in a run -----------------*- C++ -*-===//
//
// A rank learns its place from its environment, as torchrun, OpenMPI's
// mpirun and Slurm's srun set it, or as sinter-run does (torchrun's
// variables). Nothing set means a run of one process.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DIST_BOOTSTRAP_H
#define SINTER_RT_DIST_BOOTSTRAP_H

#include "dist/Communicator.h"

#include <functional>
#include <string>

namespace sinter::rt {

struct WorldInfo {
  int rank = 0;
  int size = 1;
  int localRank = 0;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  std::string source = "none"; ///< which variables said so
};

/// Reads RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT, else
/// OMPI_COMM_WORLD_*, else SLURM_PROCID/SLURM_NTASKS. Inconsistent or
/// malformed values are an error naming the variables.
Expected<WorldInfo>
readWorld(const std::function<const char *(const char *)> &getenv);

/// The communicator for `world`: local for one process, Gloo over TCP
/// otherwise (rank 0 serves the rendezvous at MASTER_ADDR:MASTER_PORT).
/// Every collective fails after `timeoutSeconds` without progress.
Expected<std::unique_ptr<Communicator>>
connectWorld(const WorldInfo &world, int timeoutSeconds);

} // namespace sinter::rt

#endif // SINTER_RT_DIST_BOOTSTRAP_H
