//===- Communicator.h - Collectives across the ranks of a run ----*- C++ -*-===//
//
// One interface for every engine (Gloo on CPU, NCCL on CUDA): each
// collective starts asynchronously, on the communicator's own thread, in the
// order it was started, and returns a Pending to wait on. Every rank must
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
#include <vector>

namespace sinter::rt {

enum class ReduceOp { Sum, Max };

/// A started collective.
/// When a collective ran on its communicator's thread, for traces.
struct CollectiveSpan {
  std::chrono::steady_clock::time_point began, ended;
};

class Pending {
public:
  Pending() = default;
  explicit Pending(std::shared_future<Status> f,
                   std::shared_ptr<const CollectiveSpan> span = nullptr)
      : future(std::move(f)), ran(std::move(span)) {}
  static Pending done(Status s);
  /// Blocks until the collective finished; its status.
  Status wait() const;
  /// After wait(): when it ran, if its communicator records that.
  const CollectiveSpan *span() const { return ran.get(); }

private:
  std::shared_future<Status> future;
  std::shared_ptr<const CollectiveSpan> ran;
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
};

/// The communicator of a process that runs alone: every collective is the
/// identity.
std::unique_ptr<Communicator> createLocalCommunicator();

} // namespace sinter::rt

#endif // SINTER_RT_DIST_COMMUNICATOR_H
