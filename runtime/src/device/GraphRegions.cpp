//===- GraphRegions.cpp - When a step's device work replays a graph ------===//

#include "device/GraphRegions.h"

namespace sinter::rt {

GraphRegions::Action GraphRegions::begin(int64_t region, const int64_t *signature,
                                         int64_t count) {
  current = nullptr;
  Action action = inProgress = choose(region, signature, count);
  if (action == Action::Direct)
    ++tally.direct;
  else if (action == Action::Capture)
    ++tally.captured;
  else
    ++tally.replayed;
  return action;
}

GraphRegions::Action GraphRegions::choose(int64_t region, const int64_t *signature,
                                          int64_t count) {
  if (!enabled)
    return Action::Direct;
  auto &entries = regions[region];
  std::vector<int64_t> key(signature, signature + count);
  auto it = entries.find(key);
  if (it == entries.end()) {
    if (entries.size() >= kMostSignatures)
      return Action::Direct;
    it = entries.emplace(std::move(key), Entry()).first;
  }
  Entry &e = it->second;
  if (e.direct)
    return Action::Direct;
  current = &e;
  int64_t run = e.runs++;
  if (run == 0)
    return Action::Direct;
  if (!e.graph)
    return Action::Capture;
  return Action::Replay;
}

void GraphRegions::runFailed() {
  if (!current || current->runs == 0)
    return;
  --current->runs;
  uncount(inProgress);
}

void GraphRegions::captureFailed() {
  uncount(Action::Capture);
  if (current) {
    current->direct = true;
    current->graph = nullptr;
  }
}

} // namespace sinter::rt
