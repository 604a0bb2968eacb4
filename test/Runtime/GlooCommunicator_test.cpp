//===- GlooCommunicator_test.cpp - Collectives between two ranks ----------===//
//
// Two ranks in two threads of this process, connected through the TCP
// rendezvous and Gloo exactly as two processes would be.
//
//===----------------------------------------------------------------------===//

#include "LocalWorld.h"
#include "TestUtil.h"
#include "dist/Bootstrap.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace sinter::rt;

namespace {

/// Runs `body(comm)` on ranks 0 and 1 of a new two-rank world.
template <typename F> void onTwoRanks(F body) {
  int port = test::freeLoopbackPort();
  test::onRanks(2, [&](int r) {
    Expected<std::unique_ptr<Communicator>> comm = test::connectLocal(r, 2, port, 20);
    ASSERT_TRUE(comm.ok()) << comm.message();
    body(**comm);
  });
}

TEST(GlooCommunicator, Collectives) {
  onTwoRanks([](Communicator &comm) {
    int r = comm.rank();
    EXPECT_EQ(comm.size(), 2);
    // All-reduce (sum, max), started together and waited in order.
    std::vector<float> a = {1.0f + r, 10.0f * r};
    std::vector<double> m = {double(r), -double(r)};
    Pending p1 = comm.allReduce(a.data(), DType::F32, 2, ReduceOp::Sum);
    Pending p2 = comm.allReduce(m.data(), DType::F64, 2, ReduceOp::Max);
    ASSERT_TRUE(p1.wait().ok());
    ASSERT_TRUE(p2.wait().ok());
    EXPECT_EQ(a, (std::vector<float>{3.0f, 10.0f}));
    EXPECT_EQ(m, (std::vector<double>{1.0, 0.0}));
    // Broadcast from rank 1.
    std::vector<int64_t> b = {r == 1 ? 7 : 0, r == 1 ? 8 : 0};
    ASSERT_TRUE(comm.broadcast(b.data(), DType::I64, 2, 1).wait().ok());
    EXPECT_EQ(b, (std::vector<int64_t>{7, 8}));
    // Reduce to rank 0.
    std::vector<float> red = {float(r + 1)};
    ASSERT_TRUE(comm.reduce(red.data(), DType::F32, 1, ReduceOp::Sum, 0).wait().ok());
    if (r == 0) {
      EXPECT_EQ(red[0], 3.0f);
    }
    // All-gather and reduce-scatter.
    std::vector<float> mine = {float(r), float(r) + 0.5f}, all(4);
    ASSERT_TRUE(comm.allGather(mine.data(), all.data(), DType::F32, 2).wait().ok());
    EXPECT_EQ(all, (std::vector<float>{0.0f, 0.5f, 1.0f, 1.5f}));
    std::vector<float> in = {1, 2, 3, 4}, out(2);
    ASSERT_TRUE(comm.reduceScatter(in.data(), out.data(), DType::F32, 2,
                                   ReduceOp::Sum)
                    .wait()
                    .ok());
    EXPECT_EQ(out, r == 0 ? (std::vector<float>{2, 4}) : (std::vector<float>{6, 8}));
    EXPECT_TRUE(comm.barrier().wait().ok());
  });
}

TEST(GlooCommunicator, PortInUseIsAClearError) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
  ::listen(fd, 1);
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len);
  WorldInfo w;
  w.rank = 0;
  w.size = 2;
  w.masterPort = ntohs(addr.sin_port);
  Expected<std::unique_ptr<Communicator>> comm = connectWorld(w, 5);
  ::close(fd);
  ASSERT_FALSE(comm.ok());
  EXPECT_NE(comm.message().find("cannot serve the rendezvous on MASTER_PORT=" +
                                std::to_string(w.masterPort)),
            std::string::npos)
      << comm.message();
}

TEST(GlooCommunicator, MissingRanksTimeOut) {
  WorldInfo w;
  w.rank = 0;
  w.size = 2;
  w.masterPort = test::freeLoopbackPort();
  Expected<std::unique_ptr<Communicator>> comm = connectWorld(w, 1);
  ASSERT_FALSE(comm.ok());
  EXPECT_NE(comm.message().find("rank 0 of 2"), std::string::npos) << comm.message();
}

} // namespace
