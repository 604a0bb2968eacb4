//===- NcclCommunicator_test.cpp - NCCL where there may be no GPU ---------===//

#include "dist/NcclCommunicator.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

using namespace sinter::rt;

namespace {

TEST(NcclCommunicator, ConnectingNeedsAGpuPerRank) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess)
    devices = 0;
  WorldInfo w;
  w.rank = 0;
  w.size = 2;
  w.localRank = devices; // one past the last GPU, or 0 with none
  Expected<std::unique_ptr<Communicator>> comm =
      connectNccl(w, createLocalCommunicator(), /*workQueue=*/nullptr, 2);
  ASSERT_FALSE(comm.ok());
  if (devices == 0)
    EXPECT_NE(comm.message().find("rank 0 of 2: no CUDA device"), std::string::npos)
        << comm.message();
  else
    EXPECT_NE(comm.message().find("LOCAL_RANK=" + std::to_string(devices)),
              std::string::npos)
        << comm.message();
}

} // namespace
