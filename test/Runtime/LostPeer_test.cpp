//===- LostPeer_test.cpp - Naming the rank a transport error is about -----===//

#include "dist/LostPeer.h"

#include <gtest/gtest.h>

using namespace sinter::rt;

TEST(LostPeer, ListeningAddressNamesTheRank) {
  std::vector<std::string> peers = {"", "[10.0.0.2]:4001", "[10.0.0.2]:4002"};
  EXPECT_EQ(lostPeerOf("Read error [10.0.0.2]:4002: Connection reset", peers), 2);
  EXPECT_EQ(lostPeerOf("Connection closed by peer [10.0.0.2]:4001", peers), 1);
}

TEST(LostPeer, EphemeralPortNamesTheOnlyPeerOnItsHost) {
  // A world of two: whichever port the error shows, it is about rank 1.
  EXPECT_EQ(lostPeerOf("Connection closed by peer [127.0.0.1]:57734",
                       {"", "[127.0.0.1]:13956"}),
            1);
  // One rank per machine.
  EXPECT_EQ(lostPeerOf("Read error [10.0.0.3]:51000: Connection reset",
                       {"[10.0.0.1]:4000", "", "[10.0.0.3]:4000"}),
            2);
}

TEST(LostPeer, TheOnlyPeerOfAWorldOfTwo) {
  EXPECT_EQ(lostPeerOf("Timed out waiting 30000ms for recv operation to complete",
                       {"[127.0.0.1]:13956", ""}),
            0);
}

TEST(LostPeer, HostOfAnAddress) {
  EXPECT_EQ(hostOf("[10.0.0.2]:4001"), "10.0.0.2");
  EXPECT_EQ(hostOf("[::1]:4001"), "::1");
  EXPECT_EQ(hostOf("node7"), "node7");
}

TEST(LostPeer, AmbiguousOrUnknownIsNotGuessed) {
  std::vector<std::string> peers = {"", "[127.0.0.1]:4001", "[127.0.0.1]:4002"};
  EXPECT_EQ(lostPeerOf("Read error [127.0.0.1]:57734: reset", peers), -1);
  EXPECT_EQ(lostPeerOf("Timed out waiting 30000ms", peers), -1);
  // "[10.0.0.1]:" must not match inside "[10.0.0.10]:".
  EXPECT_EQ(lostPeerOf("Read error [10.0.0.10]:5000", {"", "[10.0.0.1]:4000"}), -1);
}
