//===- NcclCommunicator.cpp - Collectives across GPUs (NCCL) --------------===//
//
// NCCL runs non-blocking (ncclConfig_t.blocking = 0): no NCCL call can hang
// the calling thread, and each that is still in progress is polled with a
// deadline. A watchdog thread follows the collectives in flight, in the
// order NCCL's stream runs them: a collective's deadline starts when the
// step's work before it (its inputs) is done on the GPU, so a long backward
// pass queued ahead of it is never taken for a hang. A collective that makes
// no progress within the deadline, an asynchronous NCCL error, or a rank
// the rendezvous saw leave aborts NCCL (ncclCommAbort): every collective in
// flight and every later one fails with a message naming the cause.
//
//===----------------------------------------------------------------------===//

#include "dist/NcclCommunicator.h"
#include "dist/NcclInternal.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

namespace sinter::rt {

std::string where(const WorldInfo &w) {
  return "rank " + std::to_string(w.rank) + " of " + std::to_string(w.size);
}

namespace {

bool ncclTypeOf(DType dtype, ncclDataType_t &out) {
  switch (dtype) {
  case DType::F32: out = ncclFloat32; return true;
  case DType::F64: out = ncclFloat64; return true;
  case DType::F16: out = ncclFloat16; return true;
  case DType::BF16: out = ncclBfloat16; return true;
  case DType::I64: out = ncclInt64; return true;
  case DType::I32: out = ncclInt32; return true;
  default: return false;
  }
}

/// An event shared by the watchdog and the collective's waiters; destroyed
/// by the last (CUDA lets a stream's pending wait outlive it).
using Event = std::shared_ptr<CUevent_st>;

Expected<Event> newEvent() {
  cudaEvent_t e = nullptr;
  if (cudaError_t r = cudaEventCreateWithFlags(&e, cudaEventDisableTiming); r != cudaSuccess)
    return Status::error(std::string("cudaEventCreate: ") + cudaGetErrorString(r));
  return Event(e, [](cudaEvent_t e) { cudaEventDestroy(e); });
}

/// The communicator and what guards it: every NCCL call holds `calls`, and
/// none is made once `aborted` (ncclCommAbort freed the communicator).
struct NcclHandle {
  explicit NcclHandle(ncclComm_t comm) : comm(comm) {}
  ncclComm_t comm;
  std::mutex calls;
  bool aborted = false;
  Status abortedBy; ///< why, once aborted
};

/// A collective on NCCL's stream.
class NcclStarted final : public Pending::Started {
public:
  NcclStarted(std::shared_future<Status> outcome, Event done, cudaStream_t compute,
              std::shared_ptr<const CollectiveSpan> span)
      : outcome(std::move(outcome)), done(std::move(done)), compute(compute),
        ran(std::move(span)) {}
  /// The watchdog settles it.
  Status wait() override { return outcome.get(); }
  Status waitInQueue() override {
    if (outcome.wait_for(std::chrono::seconds(0)) == std::future_status::ready &&
        !outcome.get().ok())
      return outcome.get();
    if (cudaError_t e = cudaStreamWaitEvent(compute, done.get(), 0); e != cudaSuccess)
      return Status::error(std::string("cudaStreamWaitEvent (the step waiting for a "
                                       "collective): ") +
                           cudaGetErrorString(e));
    return Status::success();
  }
  const CollectiveSpan *span() const override { return ran.get(); }

private:
  std::shared_future<Status> outcome;
  Event done;
  cudaStream_t compute;
  std::shared_ptr<const CollectiveSpan> ran;
};

class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(WorldInfo world, int gpu, ncclComm_t comm, cudaStream_t stream,
                   cudaStream_t compute, int timeoutSeconds,
                   std::function<std::string()> lostPeer)
      : world(std::move(world)), gpu(gpu), handle(comm), stream(stream), compute(compute),
        timeout(timeoutSeconds), askLostPeer(std::move(lostPeer)),
        watchdog([this] { watch(); }) {}

  ~NcclCommunicator() override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_one();
    watchdog.join(); // after the collectives in flight settled
    if (!handle.aborted)
      finish();
    cudaStreamDestroy(stream);
  }

  int rank() const override { return world.rank; }
  int size() const override { return world.size; }
  std::string engine() const override { return "NCCL"; }

  Pending allReduce(void *data, DType dtype, uint64_t count, ReduceOp op) override {
    return launch("all-reduce", dtype, [&](ncclDataType_t t) {
      return ncclAllReduce(data, data, count, t, ncclOp(op), handle.comm, stream);
    });
  }
  Pending broadcast(void *data, DType dtype, uint64_t count, int root) override {
    return launch("broadcast", dtype, [&](ncclDataType_t t) {
      return ncclBroadcast(data, data, count, t, root, handle.comm, stream);
    });
  }
  Pending reduce(void *data, DType dtype, uint64_t count, ReduceOp op, int root) override {
    return launch("reduce", dtype, [&](ncclDataType_t t) {
      return ncclReduce(data, data, count, t, ncclOp(op), root, handle.comm, stream);
    });
  }
  Pending reduceScatter(void *in, void *out, DType dtype, uint64_t count,
                        ReduceOp op) override {
    return launch("reduce-scatter", dtype, [&](ncclDataType_t t) {
      return ncclReduceScatter(in, out, count, t, ncclOp(op), handle.comm, stream);
    });
  }
  Pending allGather(const void *in, void *out, DType dtype, uint64_t count) override {
    return launch("all-gather", dtype, [&](ncclDataType_t t) {
      return ncclAllGather(in, out, count, t, handle.comm, stream);
    });
  }
  Pending barrier() override {
    // NCCL has no barrier; the run's barriers are on host memory.
    return Pending::done(Status::error(
        where(world) + ": internal error: a barrier on NCCL; barriers run on the host"));
  }

private:
  /// A collective in flight, as the watchdog follows it.
  struct InFlight {
    const char *what;
    Event inputs; ///< the step's work before it
    Event done;   ///< it, on NCCL's stream
    std::shared_ptr<std::promise<Status>> outcome;
    std::shared_ptr<CollectiveSpan> span;
    std::optional<Clock::time_point> inputsReady;
  };

  static ncclRedOp_t ncclOp(ReduceOp op) { return op == ReduceOp::Sum ? ncclSum : ncclMax; }

  template <typename F> Pending launch(const char *what, DType dtype, F &&call) {
    ncclDataType_t t;
    if (!ncclTypeOf(dtype, t))
      return Pending::done(Status::error("internal error: no NCCL type for " +
                                         std::string(dtypeName(dtype))));
    // Both events first: once NCCL has the collective, nothing may fail
    // without aborting it (the step would read buffers NCCL writes, and
    // the peers would wait for a collective this rank skipped).
    Expected<Event> inputs = newEvent(), done = newEvent();
    if (!inputs.ok() || !done.ok())
      return failed(deviceFailure(what, (inputs.ok() ? done : inputs).message()));
    // NCCL's stream starts after the work the step queued so far, which
    // made the collective's input.
    cudaError_t e = cudaEventRecord(inputs->get(), compute);
    if (e == cudaSuccess)
      e = cudaStreamWaitEvent(stream, inputs->get(), 0);
    if (e != cudaSuccess)
      return failed(deviceFailure(what, cudaGetErrorString(e)));
    ncclResult_t r;
    {
      std::lock_guard<std::mutex> lock(handle.calls);
      if (handle.aborted)
        return Pending::done(handle.abortedBy);
      r = call(t);
    }
    // Non-blocking: the call may still be queueing its work.
    if (r == ncclInProgress)
      r = settle(what, Clock::now() + std::chrono::seconds(timeout));
    if (r != ncclSuccess)
      return failed(failure(what, r == ncclInProgress ? "no progress within the deadline"
                                                      : ncclGetErrorString(r)));
    if ((e = cudaEventRecord(done->get(), stream)) != cudaSuccess)
      return failed(deviceFailure(what, cudaGetErrorString(e)));
    auto outcome = std::make_shared<std::promise<Status>>();
    auto span = std::make_shared<CollectiveSpan>();
    Pending pending(std::make_shared<NcclStarted>(outcome->get_future().share(), *done,
                                                  compute, span));
    {
      std::lock_guard<std::mutex> lock(mutex);
      flights.push_back({what, *inputs, *done, outcome, span, std::nullopt});
    }
    wake.notify_one();
    return pending;
  }

  /// A collective that could not start: NCCL is aborted, so this rank and
  /// every later collective fail with the first cause.
  Pending failed(const Status &why) {
    abort(why);
    std::lock_guard<std::mutex> lock(handle.calls);
    return Pending::done(handle.abortedBy);
  }

  /// The communicator's state, polled until it is no longer in progress
  /// or `deadline` passes (then still ncclInProgress).
  ncclResult_t settle(const char *what, Clock::time_point deadline) {
    auto asked = Clock::now();
    for (;;) {
      ncclResult_t state;
      {
        std::lock_guard<std::mutex> lock(handle.calls);
        if (handle.aborted)
          return ncclInternalError;
        if (ncclCommGetAsyncError(handle.comm, &state) != ncclSuccess)
          return ncclInternalError;
      }
      if (state != ncclInProgress || Clock::now() > deadline)
        return state;
      if (Clock::now() - asked > kAskAfter) {
        asked = Clock::now();
        if (std::string lost = askLostPeer(); !lost.empty()) {
          abort(failure(what, "lost " + lost));
          return ncclRemoteError;
        }
      }
      std::this_thread::sleep_for(kPollInterval);
    }
  }

  /// Aborts NCCL once, for `why`: its kernels in flight end, and every
  /// later call fails with `why`.
  void abort(const Status &why) {
    std::lock_guard<std::mutex> lock(handle.calls);
    if (handle.aborted)
      return;
    ncclCommAbort(handle.comm);
    handle.aborted = true;
    handle.abortedBy = why;
  }

  /// Finalizes and destroys the communicator, aborting it should that
  /// make no progress.
  void finish() {
    ncclResult_t r;
    {
      std::lock_guard<std::mutex> lock(handle.calls);
      r = ncclCommFinalize(handle.comm);
    }
    if (r == ncclInProgress)
      r = settle("finalize", Clock::now() + std::chrono::seconds(timeout));
    std::lock_guard<std::mutex> lock(handle.calls);
    if (handle.aborted)
      return;
    if (r == ncclSuccess)
      ncclCommDestroy(handle.comm);
    else
      ncclCommAbort(handle.comm);
    handle.aborted = true;
  }

  /// The watchdog: settles each collective in flight, in NCCL's order.
  void watch() {
    // This rank's GPU, or CUDA would open a context on GPU 0 for this thread.
    cudaSetDevice(gpu);
    auto asked = Clock::now();
    for (;;) {
      InFlight *front;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || !flights.empty(); });
        if (flights.empty())
          return;
        front = &flights.front(); // deque: stays put while others are added
      }
      Status verdict = check(*front, asked);
      bool settled = !verdict.ok() || front->span->ended != Clock::time_point();
      if (!verdict.ok()) {
        abort(verdict);
        failAll(handle.abortedBy);
        continue;
      }
      if (!settled) {
        std::this_thread::sleep_for(front->inputsReady ? kPollInterval : kPollWhileQueued);
        continue;
      }
      std::lock_guard<std::mutex> lock(mutex);
      front->outcome->set_value(Status::success());
      flights.pop_front();
    }
  }

  /// One look at `f`: notes when its inputs were ready and when it ended;
  /// a failure when it cannot end.
  Status check(InFlight &f, Clock::time_point &asked) {
    auto now = Clock::now();
    // NCCL's own word first: a collective whose event passed after NCCL
    // failed (or was aborted) did not sum anything.
    ncclResult_t async = ncclSuccess;
    {
      std::lock_guard<std::mutex> lock(handle.calls);
      if (handle.aborted)
        return handle.abortedBy;
      if (ncclCommGetAsyncError(handle.comm, &async) != ncclSuccess)
        async = ncclInternalError;
    }
    if (async != ncclSuccess && async != ncclInProgress)
      return failure(f.what, ncclGetErrorString(async));
    if (!f.inputsReady) {
      cudaError_t e = cudaEventQuery(f.inputs.get());
      if (e == cudaSuccess) {
        f.inputsReady = now;
        f.span->began = now;
      } else if (e != cudaErrorNotReady) {
        return deviceFailure(f.what, cudaGetErrorString(e));
      } else {
        return Status::success(); // the step's work before it still runs
      }
    }
    cudaError_t e = cudaEventQuery(f.done.get());
    if (e == cudaSuccess) {
      f.span->ended = now;
      return Status::success();
    }
    if (e != cudaErrorNotReady)
      return deviceFailure(f.what, cudaGetErrorString(e));
    auto waited = now - *f.inputsReady;
    if (waited > kAskAfter && now - asked > kAskAfter) {
      asked = now;
      if (std::string lost = askLostPeer(); !lost.empty())
        return failure(f.what, "lost " + lost);
    }
    if (waited > std::chrono::seconds(timeout))
      return failure(f.what, "no progress within " + std::to_string(timeout) +
                                 " s of its inputs being ready");
    return Status::success();
  }

  /// Every collective in flight fails with `why`.
  void failAll(const Status &why) {
    std::lock_guard<std::mutex> lock(mutex);
    for (InFlight &f : flights)
      f.outcome->set_value(why);
    flights.clear();
  }

  Status failure(const char *what, const std::string &why) const {
    std::string hint = why.rfind("lost ", 0) == 0
                           ? ""
                           : " (another rank died or stopped responding)";
    return Status::error(where(world) + ": NCCL " + what + " failed: " + why + hint);
  }
  Status deviceFailure(const char *what, const std::string &why) const {
    return Status::error(where(world) + ": NCCL " + what +
                         " failed on this rank's GPU: " + why);
  }

  WorldInfo world;
  int gpu;
  NcclHandle handle;
  cudaStream_t stream;  ///< NCCL's
  cudaStream_t compute; ///< the step's
  int timeout;
  std::function<std::string()> askLostPeer;
  std::mutex mutex; ///< guards flights and stopping
  std::condition_variable wake;
  std::deque<InFlight> flights;
  bool stopping = false;
  std::thread watchdog;
};

} // namespace

std::unique_ptr<Communicator>
makeNcclCommunicator(WorldInfo world, int gpu, ncclComm_t comm, cudaStream_t stream,
                     cudaStream_t compute, int timeoutSeconds,
                     std::function<std::string()> lostPeer) {
  return std::make_unique<NcclCommunicator>(std::move(world), gpu, comm, stream, compute,
                                            timeoutSeconds, std::move(lostPeer));
}

} // namespace sinter::rt
