//===- Bootstrap_test.cpp - Reading a rank's place from its environment ---===//

#include "dist/Bootstrap.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace sinter::rt;

namespace {

Expected<WorldInfo> read(std::map<std::string, std::string> env) {
  return readWorld([&](const char *name) -> const char * {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Bootstrap, NothingSetIsOneProcess) {
  Expected<WorldInfo> w = read({});
  ASSERT_TRUE(w.ok()) << w.message();
  EXPECT_EQ(w->rank, 0);
  EXPECT_EQ(w->size, 1);
}

TEST(Bootstrap, TorchrunVariables) {
  Expected<WorldInfo> w = read({{"RANK", "3"}, {"WORLD_SIZE", "4"},
                                {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "10.0.0.2"},
                                {"MASTER_PORT", "29501"}});
  ASSERT_TRUE(w.ok()) << w.message();
  EXPECT_EQ(w->rank, 3);
  EXPECT_EQ(w->size, 4);
  EXPECT_EQ(w->localRank, 1);
  EXPECT_EQ(w->masterAddr, "10.0.0.2");
  EXPECT_EQ(w->masterPort, 29501);
}

TEST(Bootstrap, OpenMPIAndSlurmVariables) {
  Expected<WorldInfo> mpi =
      read({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
  ASSERT_TRUE(mpi.ok()) << mpi.message();
  EXPECT_EQ(mpi->rank, 1);
  EXPECT_EQ(mpi->size, 2);
  Expected<WorldInfo> slurm = read({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}});
  ASSERT_TRUE(slurm.ok()) << slurm.message();
  EXPECT_EQ(slurm->rank, 5);
  EXPECT_EQ(slurm->size, 8);
}

TEST(Bootstrap, InconsistentVariablesAreErrorsNamingThem) {
  auto message = [](std::map<std::string, std::string> env) {
    Expected<WorldInfo> w = read(env);
    EXPECT_FALSE(w.ok());
    return w.ok() ? std::string() : w.message();
  };
  EXPECT_EQ(message({{"RANK", "2"}, {"WORLD_SIZE", "2"}}),
            "RANK=2 is not below WORLD_SIZE=2");
  EXPECT_EQ(message({{"RANK", "0"}}),
            "RANK is set but WORLD_SIZE is not; set both or neither");
  EXPECT_EQ(message({{"RANK", "x"}, {"WORLD_SIZE", "2"}}),
            "RANK='x' is not a non-negative integer");
  EXPECT_EQ(message({{"RANK", "0"}, {"WORLD_SIZE", "0"}}),
            "WORLD_SIZE='0' must be a positive integer");
  EXPECT_NE(message({{"RANK", "0"}, {"WORLD_SIZE", "2"},
                     {"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}})
                .find("disagree"),
            std::string::npos);
  EXPECT_EQ(message({{"MASTER_PORT", "70000"}}),
            "MASTER_PORT='70000' is not a port number (1-65535)");
}

} // namespace
