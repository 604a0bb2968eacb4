//===- GraphRegions.h - When a step's device work replays a graph -*- C++ -*-===//
//
// The step brackets each stretch of device work it queues with no host
// work between (abi.h's sinter_cuda_graph_begin/end) and names what the
// stretch takes from outside: its signature. The same region with the same
// signature queues the same work, so the device records it once and
// replays the record. This decides, per region and signature:
//   - the first run is direct: it warms the libraries (their plans and
//     workspaces are made then, which a capture could not do);
//   - the second runs direct too, its calls recorded, and the record is
//     captured (not run) at its end: a capture that fails loses no work;
//   - every later one replays the capture.
// A region whose signature changes every time (a learning rate, a step
// count, a random key) keeps running direct, and its signatures stop being
// remembered after kMostSignatures.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DEVICE_GRAPHREGIONS_H
#define SINTER_RT_DEVICE_GRAPHREGIONS_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

namespace sinter::rt {

class GraphRegions {
public:
  enum class Action { Direct, Capture, Replay };

  /// Signatures remembered per region.
  static constexpr size_t kMostSignatures = 64;

  /// `enabled` false: every region runs direct.
  explicit GraphRegions(bool enabled = true) : enabled(enabled) {}

  /// Region `region` starts with this signature: what to do with its work.
  /// Capture (record, then capture) and Replay concern graph() until end().
  Action begin(int64_t region, const int64_t *signature, int64_t count);
  /// The region begun last is over.
  void end() { current = nullptr; }

  /// The device's record of the region in progress (its executable graph):
  /// set after a Capture, read for a Replay. Null outside a region.
  void **graph() { return current ? &current->graph : nullptr; }
  /// The capture in progress failed: that signature runs direct from now on.
  void captureFailed();
  /// The run in progress failed: it does not count (the libraries may not
  /// have made their plans), so the next one does what it would have done.
  void runFailed();

  /// Calls `release` on every record kept.
  template <typename F> void forEachGraph(F &&release) {
    for (auto &[id, region] : regions)
      for (auto &[signature, entry] : region)
        if (entry.graph)
          release(entry.graph);
  }
  /// Forgets every record (after `release` on each) and every signature:
  /// the records name memory the device is about to free (a library
  /// workspace that grew). The region in progress, if any, runs direct.
  template <typename F> void forget(F &&release) {
    forEachGraph(release);
    regions.clear();
    if (current && inProgress == Action::Capture)
      uncount(Action::Capture);
    current = nullptr;
  }

  bool isEnabled() const { return enabled; }

  /// How the regions have run so far: direct (after a failed capture too),
  /// captured (and launched), replayed.
  struct Counts {
    int64_t direct = 0, captured = 0, replayed = 0;
  };
  const Counts &counts() const { return tally; }

private:
  struct Entry {
    int64_t runs = 0;
    void *graph = nullptr;
    bool direct = false; ///< its capture failed
  };
  Action choose(int64_t region, const int64_t *signature, int64_t count);
  /// A capture begun that will not be: counted direct instead.
  void uncount(Action action) {
    if (action == Action::Capture) {
      --tally.captured;
      ++tally.direct;
    }
  }

  bool enabled;
  std::unordered_map<int64_t, std::map<std::vector<int64_t>, Entry>> regions;
  Entry *current = nullptr;
  Action inProgress = Action::Direct; ///< what begin() chose for `current`
  Counts tally;
};

} // namespace sinter::rt

#endif // SINTER_RT_DEVICE_GRAPHREGIONS_H
