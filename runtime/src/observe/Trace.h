//===- Trace.h - A Chrome trace of a run, per rank ------------------*- C++ -*-===//
//
// Every rank writes its own trace file in Chrome's trace event format
// (a JSON array), which Perfetto and chrome://tracing open. The rank is the
// process; its tracks are the step (data wait, each micro-batch's forward
// and backward, the wait for gradients, the optimizer, checkpoints and
// evaluations) and one per collective: each gradient bucket's all-reduce,
// and the sharded strategies' reduce-scatters and all-gathers. Times are the
// machine's monotonic clock, so the ranks of one machine line up.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_OBSERVE_TRACE_H
#define SINTER_RT_OBSERVE_TRACE_H

#include "observe/StepEvents.h"
#include "sinter/rt/Status.h"

#include <cstdio>
#include <memory>
#include <set>
#include <string>

namespace sinter::rt {

/// `file` for a run of one rank; else rank R's file, with ".rank-R" before
/// the extension ("trace.json" -> "trace.rank-1.json").
std::string traceFileOf(const std::string &file, int rank, int worldSize);

class Trace {
public:
  using Clock = std::chrono::steady_clock;
  static Expected<std::unique_ptr<Trace>> open(const std::string &file, int rank,
                                               int worldSize);
  ~Trace();

  /// One train step: from when it asked for its first batch, through what
  /// it recorded in `events`.
  void step(int64_t step, Clock::time_point dataBegin, Clock::time_point dataEnd,
            const StepEvents &events);
  /// Something else on the step's track: a checkpoint, an evaluation.
  void span(const std::string &name, Clock::time_point begin, Clock::time_point end);
  /// Writes what was recorded; once per step.
  Status flush();
  /// Ends the JSON array; the file is then complete.
  Status close();

  const std::string &path() const { return file; }

private:
  Trace(std::string file, std::FILE *out, int rank);
  void complete(int track, const std::string &name, const char *category,
                Clock::time_point begin, Clock::time_point end);
  void nameTrack(int track);

  std::string file;
  std::FILE *out;
  int rank;
  std::string pending; ///< events not yet written
  std::set<int> named; ///< tracks with their names written
};

} // namespace sinter::rt

#endif // SINTER_RT_OBSERVE_TRACE_H
