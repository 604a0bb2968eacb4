//===- StagedCommunicator.cpp - Device collectives through host memory ----===//

#include "dist/StagedCommunicator.h"

#include "support/SerialWorker.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>

namespace sinter::rt {
namespace {

using Clock = std::chrono::steady_clock;

/// What a collective's thread hands its waiters: how its host part ended,
/// and the copy of its result back to the device (none for host memory).
struct Outcome {
  Status status;
  Mark copiedBack;
};

class StagedStarted final : public Pending::Started {
public:
  StagedStarted(std::shared_future<Outcome> outcome, StagingQueues &queues,
                std::shared_ptr<const CollectiveSpan> span)
      : outcome(std::move(outcome)), queues(queues), ran(std::move(span)) {}

  Status wait() override {
    const Outcome &o = outcome.get();
    if (!o.status.ok() || !o.copiedBack)
      return o.status;
    if (!copiedBack)
      copiedBack = queues.waitHost(o.copiedBack);
    return *copiedBack;
  }
  Status waitInQueue() override {
    const Outcome &o = outcome.get();
    if (!o.status.ok() || !o.copiedBack)
      return o.status;
    return queues.waitStep(o.copiedBack);
  }
  const CollectiveSpan *span() const override { return ran.get(); }

private:
  std::shared_future<Outcome> outcome;
  StagingQueues &queues;
  std::shared_ptr<const CollectiveSpan> ran;
  std::optional<Status> copiedBack; ///< once the host waited for it
};

class Staged final : public StagedCommunicator {
public:
  Staged(std::unique_ptr<Communicator> host, StagingQueues &queues, std::string via)
      : host(std::move(host)), queues(queues), via(std::move(via)) {}

  ~Staged() override {
    worker.stop(); // after every collective started
    for (HostBuffer &b : pool) {
      if (b.copiedBack)
        (void)queues.waitHost(b.copiedBack); // the copy reads the buffer
      queues.releaseHost(b.data);
    }
  }

  int rank() const override { return host->rank(); }
  int size() const override { return host->size(); }
  std::string engine() const override { return host->engine() + ", through " + via; }
  std::string lostPeer() override { return host->lostPeer(); }
  std::string activity() const override {
    char text[160];
    std::snprintf(text, sizeof text,
                  "collectives staged through %s: %.1f MiB of them held at most",
                  via.c_str(), double(stagedBytes()) / (1 << 20));
    return text;
  }
  uint64_t stagedBytes() const override {
    std::lock_guard<std::mutex> lock(poolMutex);
    uint64_t bytes = 0;
    for (const HostBuffer &b : pool)
      bytes += b.capacity;
    return bytes;
  }

  Pending allReduce(void *data, DType dtype, uint64_t count, ReduceOp op) override {
    uint64_t bytes = count * dtypeSize(dtype);
    return start("all-reduce", {data, bytes}, {data, bytes}, 0, [=](char *in, char *) {
      return host->allReduce(in, dtype, count, op).wait();
    });
  }
  Pending broadcast(void *data, DType dtype, uint64_t count, int root) override {
    uint64_t bytes = count * dtypeSize(dtype);
    return start("broadcast", {data, bytes}, {data, bytes}, 0, [=](char *in, char *) {
      return host->broadcast(in, dtype, count, root).wait();
    });
  }
  Pending reduce(void *data, DType dtype, uint64_t count, ReduceOp op, int root) override {
    uint64_t bytes = count * dtypeSize(dtype);
    return start("reduce", {data, bytes}, {data, bytes}, 0, [=](char *in, char *) {
      return host->reduce(in, dtype, count, op, root).wait();
    });
  }
  // The rows, then this rank's sum right after them.
  Pending reduceScatter(void *in, void *out, DType dtype, uint64_t count,
                        ReduceOp op) override {
    uint64_t part = count * dtypeSize(dtype), rows = part * uint64_t(size());
    return start("reduce-scatter", {in, rows}, {out, part}, rows, [=](char *i, char *o) {
      return host->reduceScatter(i, o, dtype, count, op).wait();
    });
  }
  // This rank's part, then every rank's right after it.
  Pending allGather(const void *in, void *out, DType dtype, uint64_t count) override {
    uint64_t part = count * dtypeSize(dtype), rows = part * uint64_t(size());
    return start("all-gather", {const_cast<void *>(in), part}, {out, rows}, part,
                 [=](char *i, char *o) { return host->allGather(i, o, dtype, count).wait(); });
  }
  Pending barrier() override {
    return onThread(
        [this] {
          return Outcome{broken.ok() ? host->barrier().wait() : broken, nullptr};
        },
        nullptr);
  }

private:
  struct Region {
    void *data;
    uint64_t bytes;
  };
  struct HostBuffer {
    void *data = nullptr;
    uint64_t capacity = 0;
    bool busy = false; ///< its collective's host part is not done
    Mark copiedBack;   ///< the copy back to the device, which reads it
  };
  /// The host engine's part, on its input and output in host memory.
  using HostPart = std::function<Status(char *in, char *out)>;

  /// Queues `job` on the collectives' thread.
  Pending onThread(std::function<Outcome()> job, std::shared_ptr<CollectiveSpan> span) {
    auto promise = std::make_shared<std::promise<Outcome>>();
    Pending pending(std::make_shared<StagedStarted>(promise->get_future().share(), queues,
                                                    span));
    worker.post([this, promise, job = std::move(job)] {
      // After one failure the host engine's connections are gone, and a
      // collective this rank could not start leaves it out of step with
      // the others: every later one fails at once with the first cause.
      Outcome o = job();
      if (!o.status.ok() && broken.ok())
        broken = o.status;
      promise->set_value(std::move(o));
    });
    return pending;
  }

  /// A collective that reads `in` and writes `out`: on the host engine
  /// directly when they are host memory, else through a host buffer that
  /// `in` is copied to the start of and `out` from `outAt` of.
  Pending start(const char *what, Region in, Region out, uint64_t outAt, HostPart part) {
    bool staged = queues.isDeviceMemory(in.data);
    if (staged != queues.isDeviceMemory(out.data))
      return failedToStart(Status::error(std::string("internal error: a staged ") + what +
                                         " between host and device memory"));
    auto span = std::make_shared<CollectiveSpan>();
    if (!staged)
      return onThread(
          [=] {
            if (!broken.ok())
              return Outcome{broken, nullptr};
            span->began = Clock::now();
            Status s = part(static_cast<char *>(in.data), static_cast<char *>(out.data));
            span->ended = Clock::now();
            return Outcome{s, nullptr};
          },
          span);
    uint64_t bytes = std::max(in.bytes, outAt + out.bytes);
    Expected<size_t> buffer = takeBuffer(bytes);
    if (!buffer.ok())
      return failedToStart(failure(what, buffer.status()));
    char *at = static_cast<char *>(bufferData(*buffer));
    Expected<Mark> begin = queues.markStep();
    Expected<Mark> down = begin.ok() ? queues.download(at, in.data, in.bytes, *begin)
                                     : Expected<Mark>(begin.status());
    if (!down.ok()) {
      giveBack(*buffer, nullptr);
      return failedToStart(failure(what, down.status()));
    }
    Mark after = *begin, copied = *down;
    size_t index = *buffer;
    return onThread(
        [=] {
          if (!broken.ok()) {
            giveBack(index, nullptr);
            return Outcome{broken, nullptr};
          }
          // The deadline (the host engine's) starts once the input is here.
          Status s = queues.waitHost(copied);
          span->began = Clock::now();
          if (s.ok())
            s = part(at, at + outAt);
          span->ended = Clock::now();
          Mark back;
          if (s.ok()) {
            Expected<Mark> up = queues.upload(out.data, at + outAt, out.bytes, after);
            if (up.ok())
              back = *up;
            else
              s = failure(what, up.status());
          }
          giveBack(index, back);
          return Outcome{s, back};
        },
        span);
  }

  /// A collective that could not start fails in its turn on the
  /// collectives' thread, and so does every later one.
  Pending failedToStart(Status why) {
    return onThread([why] { return Outcome{why, nullptr}; }, nullptr);
  }

  Status failure(const char *what, const Status &why) const {
    return why.withPrefix("rank " + std::to_string(rank()) + " of " +
                          std::to_string(size()) + ": " + what + " through host memory: ");
  }

  /// The smallest free buffer of at least `bytes`, or a new one.
  Expected<size_t> takeBuffer(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(poolMutex);
    std::optional<size_t> best;
    for (size_t i = 0; i < pool.size(); ++i)
      if (!pool[i].busy && pool[i].capacity >= bytes &&
          (!best || pool[i].capacity < pool[*best].capacity))
        best = i;
    if (best) {
      HostBuffer &b = pool[*best];
      // Its copy back reads it: short, and already queued.
      if (b.copiedBack && !queues.passed(b.copiedBack))
        SINTER_RT_RETURN_IF_ERROR(queues.waitHost(b.copiedBack));
      b.copiedBack = nullptr;
      b.busy = true;
      return *best;
    }
    Expected<void *> made = queues.allocateHost(bytes);
    if (!made.ok())
      return made.status();
    pool.push_back({*made, bytes, true, nullptr});
    return pool.size() - 1;
  }
  void *bufferData(size_t i) {
    std::lock_guard<std::mutex> lock(poolMutex);
    return pool[i].data;
  }
  void giveBack(size_t i, Mark copiedBack) {
    std::lock_guard<std::mutex> lock(poolMutex);
    pool[i].busy = false;
    pool[i].copiedBack = std::move(copiedBack);
  }

  std::unique_ptr<Communicator> host;
  StagingQueues &queues;
  std::string via;
  mutable std::mutex poolMutex;
  std::vector<HostBuffer> pool;
  Status broken; ///< the first failure; the collectives' thread only
  SerialWorker worker; ///< last: its jobs use the members above
};

} // namespace

std::unique_ptr<StagedCommunicator>
createStagedCommunicator(std::unique_ptr<Communicator> host, StagingQueues &queues,
                         std::string via) {
  return std::make_unique<Staged>(std::move(host), queues, std::move(via));
}

} // namespace sinter::rt
