//===- Communicator.h - Collectives across the ranks of a run ----*- C++ -*-===//
//
// One interface for every engine (Gloo on CPU, NCCL on CUDA, Gloo through
// host buffers on CUDA): each collective starts asynchronously, in the order
// it was started, and returns a Pending to wait on. Every rank must
// start the same collectives in the same order. A failure (a rank that died,
// a timeout) is a Status naming this rank and the collective, never a hang:
// every operation has a deadline.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DIST_COMMUNICATOR_H
#define SINTER_RT_DIST_COMMUNICATOR_H

#include "sinter/rt/DType.h"
#include "sinter/rt/Status.h"

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace sinter::rt {

enum class ReduceOp { Sum, Max };

/// When a collective ran on its communicator's thread, for traces.
struct CollectiveSpan {
  std::chrono::steady_clock::time_point began, ended;
};

/// A started collective. The host may wait for it, or, where its memory is
/// a device's, have the device's work queue wait for it: work queued after
/// waitInQueue() reads its result, and the host goes on without waiting for
/// the device. Either wait may be called more than once, from one thread.
class Pending {
public:
  /// What a communicator returns for a collective it started.
  class Started {
  public:
    virtual ~Started();
    /// Blocks until the collective is done; its status.
    virtual Status wait() = 0;
    /// Orders the device's later work after the collective; by default the
    /// host waits for it. A failure found after this returns surfaces at
    /// wait().
    virtual Status waitInQueue() { return wait(); }
    /// After wait(): when it ran, if recorded.
    virtual const CollectiveSpan *span() const { return nullptr; }
  };

  Pending() = default;
  explicit Pending(std::shared_ptr<Started> started) : started(std::move(started)) {}
  /// A collective the host waits for through `f`.
  explicit Pending(std::shared_future<Status> f,
                   std::shared_ptr<const CollectiveSpan> span = nullptr);
  static Pending done(Status s);
  Status wait() const { return started ? started->wait() : Status::success(); }
  Status waitInQueue() const {
    return started ? started->waitInQueue() : Status::success();
  }
  const CollectiveSpan *span() const { return started ? started->span() : nullptr; }

private:
  std::shared_ptr<Started> started;
};

/// Waits for every one of `started`, even after one failed (none may then
/// write into buffers its caller frees); the first failure, or success.
Status waitAll(const std::vector<Pending> &started);

class Communicator {
public:
  virtual ~Communicator();
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// data = op over ranks of data (in place).
  virtual Pending allReduce(void *data, DType dtype, uint64_t count,
                            ReduceOp op) = 0;
  /// data = root's data.
  virtual Pending broadcast(void *data, DType dtype, uint64_t count,
                            int root) = 0;
  /// On `root`, data = op over ranks of data; elsewhere data is unchanged.
  virtual Pending reduce(void *data, DType dtype, uint64_t count, ReduceOp op,
                         int root) = 0;
  /// out (count elements) = op over ranks of in[rank * count, +count). `in`
  /// is scratch: what it holds afterwards is unspecified.
  virtual Pending reduceScatter(void *in, void *out, DType dtype,
                                uint64_t count, ReduceOp op) = 0;
  /// out[r * count, +count) = rank r's in (count elements).
  virtual Pending allGather(const void *in, void *out, DType dtype,
                            uint64_t count) = 0;
  virtual Pending barrier() = 0;

  /// Whether collectives run at all: false for a process that runs alone
  /// without an engine (every collective the identity), which the step then
  /// skips.
  virtual bool runsCollectives() const { return true; }
  /// The engine, for the run's first lines: "Gloo over TCP", "NCCL", ...
  virtual std::string engine() const = 0;
  /// The rank the run lost, as the rendezvous recorded it ("rank 1
  /// (host)"), or "" when none is known. Cheap enough to ask once a second.
  virtual std::string lostPeer() { return ""; }
  /// What it did over the run worth a line in the log; "" for nothing.
  virtual std::string activity() const { return ""; }
};

/// The communicator of a process that runs alone: every collective is the
/// identity.
std::unique_ptr<Communicator> createLocalCommunicator();

} // namespace sinter::rt

#endif // SINTER_RT_DIST_COMMUNICATOR_H
