//===- LocalWorld.h - Ranks of a world in threads of one test -----*- C++ -*-===//

#ifndef SINTER_TEST_RUNTIME_LOCALWORLD_H
#define SINTER_TEST_RUNTIME_LOCALWORLD_H

#include "dist/Bootstrap.h"

#include <memory>
#include <thread>
#include <vector>

namespace sinter::rt::test {

/// Connects rank `rank` of a world of `size` whose rendezvous listens on
/// loopback at `port`, waiting at most `timeoutSeconds` for the others.
inline Expected<std::unique_ptr<Communicator>> connectLocal(int rank, int size, int port,
                                                            int timeoutSeconds) {
  WorldInfo w;
  w.rank = rank;
  w.size = size;
  w.masterPort = port;
  return connectWorld(w, timeoutSeconds);
}

/// Runs `body(rank)` for every rank of a world of `size`, each on a thread
/// of its own (rank 0 on this one), and waits for all of them.
template <typename F> void onRanks(int size, F body) {
  std::vector<std::thread> others;
  for (int r = 1; r < size; ++r)
    others.emplace_back(body, r);
  body(0);
  for (std::thread &t : others)
    t.join();
}

} // namespace sinter::rt::test

#endif
