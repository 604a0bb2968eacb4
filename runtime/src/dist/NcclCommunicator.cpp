//===- NcclCommunicator.cpp - Collectives across GPUs (NCCL) --------------===//

#include "dist/NcclCommunicator.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <thread>

namespace sinter::rt {
namespace {

std::string where(const WorldInfo &w) {
  return "rank " + std::to_string(w.rank) + " of " + std::to_string(w.size);
}

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

class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(WorldInfo world, ncclComm_t comm, cudaStream_t stream,
                   cudaStream_t producer, int timeoutSeconds)
      : world(std::move(world)), comm(comm), stream(stream), producer(producer),
        timeout(timeoutSeconds) {}

  ~NcclCommunicator() override {
    if (!aborted) // ncclCommAbort freed it
      ncclCommDestroy(comm);
    cudaStreamDestroy(stream);
  }

  int rank() const override { return world.rank; }
  int size() const override { return world.size; }

  Pending allReduce(void *data, DType dtype, uint64_t count,
                    ReduceOp op) override {
    return launch("all-reduce", dtype, [&](ncclDataType_t t) {
      return ncclAllReduce(data, data, count, t, ncclOp(op), comm, stream);
    });
  }
  Pending broadcast(void *data, DType dtype, uint64_t count, int root) override {
    return launch("broadcast", dtype, [&](ncclDataType_t t) {
      return ncclBroadcast(data, data, count, t, root, comm, stream);
    });
  }
  Pending reduce(void *data, DType dtype, uint64_t count, ReduceOp op,
                 int root) override {
    return launch("reduce", dtype, [&](ncclDataType_t t) {
      return ncclReduce(data, data, count, t, ncclOp(op), root, comm, stream);
    });
  }
  Pending reduceScatter(void *in, void *out, DType dtype, uint64_t count,
                        ReduceOp op) override {
    return launch("reduce-scatter", dtype, [&](ncclDataType_t t) {
      return ncclReduceScatter(in, out, count, t, ncclOp(op), comm, stream);
    });
  }
  Pending allGather(const void *in, void *out, DType dtype,
                    uint64_t count) override {
    return launch("all-gather", dtype, [&](ncclDataType_t t) {
      return ncclAllGather(in, out, count, t, comm, stream);
    });
  }
  Pending barrier() override {
    // A one-element all-reduce on the device: NCCL has no barrier.
    return Pending::done(Status::error(
        where(world) + ": NCCL barriers need a device buffer; use an all-reduce"));
  }

private:
  static ncclRedOp_t ncclOp(ReduceOp op) {
    return op == ReduceOp::Sum ? ncclSum : ncclMax;
  }

  template <typename F> Pending launch(const char *what, DType dtype, F &&call) {
    ncclDataType_t t;
    if (!ncclTypeOf(dtype, t))
      return Pending::done(Status::error("internal error: no NCCL type for " +
                                         std::string(dtypeName(dtype))));
    if (aborted)
      return Pending::done(failure(what, "NCCL was stopped by an earlier failure"));
    // The buffers are the step's: NCCL's stream starts after the work the
    // step has queued so far.
    cudaEvent_t queued;
    cudaError_t e = cudaEventCreateWithFlags(&queued, cudaEventDisableTiming);
    if (e == cudaSuccess) {
      e = cudaEventRecord(queued, producer);
      if (e == cudaSuccess)
        e = cudaStreamWaitEvent(stream, queued, 0);
      cudaEventDestroy(queued);
    }
    if (e != cudaSuccess)
      return Pending::done(deviceFailure(what, e));
    ncclResult_t r = call(t);
    if (r != ncclSuccess)
      return Pending::done(failure(what, ncclGetErrorString(r)));
    cudaEvent_t done;
    e = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    if (e == cudaSuccess && (e = cudaEventRecord(done, stream)) != cudaSuccess)
      cudaEventDestroy(done);
    if (e != cudaSuccess)
      return Pending::done(deviceFailure(what, e));
    // Waiting polls the event and NCCL's asynchronous error, with a
    // deadline: a lost peer ends in an error, never a hang.
    auto wait = [this, done, what]() -> Status {
      auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
      Status outcome;
      for (;;) {
        cudaError_t e = cudaEventQuery(done);
        if (e == cudaSuccess)
          break;
        if (e != cudaErrorNotReady) { // the GPU failed, not a peer
          outcome = deviceFailure(what, e);
          break;
        }
        if (aborted) {
          outcome = failure(what, "NCCL was stopped by an earlier failure");
          break;
        }
        ncclResult_t async = ncclSuccess;
        ncclCommGetAsyncError(comm, &async);
        if (async != ncclSuccess || std::chrono::steady_clock::now() > deadline) {
          // Frees the communicator: later collectives and waits fail at once.
          ncclCommAbort(comm);
          aborted = true;
          outcome = failure(what, async != ncclSuccess ? ncclGetErrorString(async)
                                                       : "no progress within the timeout");
          break;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      cudaEventDestroy(done);
      return outcome;
    };
    return Pending(std::async(std::launch::deferred, wait).share());
  }

  Status failure(const char *what, const std::string &why) const {
    return Status::error(where(world) + ": " + what + " failed: " + why +
                         " (another rank died or stopped responding)");
  }
  Status deviceFailure(const char *what, cudaError_t e) const {
    return Status::error(where(world) + ": " + what + " failed on this rank's GPU: " +
                         cudaGetErrorString(e));
  }

  WorldInfo world;
  ncclComm_t comm;
  cudaStream_t stream;
  cudaStream_t producer; ///< the step's stream
  int timeout;
  bool aborted = false; ///< after ncclCommAbort, `comm` is gone
};

/// Whether `p` is device memory (of any GPU).
bool onDevice(const void *p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError(); // a host pointer the runtime never saw
    return false;
  }
  return a.type == cudaMemoryTypeDevice;
}

/// A CUDA run's communicator: each collective goes where its memory is.
class CudaRunCommunicator final : public Communicator {
public:
  CudaRunCommunicator(std::unique_ptr<Communicator> host,
                      std::unique_ptr<Communicator> nccl)
      : host(std::move(host)), nccl(std::move(nccl)) {}

  int rank() const override { return host->rank(); }
  int size() const override { return host->size(); }
  Pending allReduce(void *data, DType dtype, uint64_t count, ReduceOp op) override {
    return on(data).allReduce(data, dtype, count, op);
  }
  Pending broadcast(void *data, DType dtype, uint64_t count, int root) override {
    return on(data).broadcast(data, dtype, count, root);
  }
  Pending reduce(void *data, DType dtype, uint64_t count, ReduceOp op,
                 int root) override {
    return on(data).reduce(data, dtype, count, op, root);
  }
  Pending reduceScatter(void *in, void *out, DType dtype, uint64_t count,
                        ReduceOp op) override {
    return on(in).reduceScatter(in, out, dtype, count, op);
  }
  Pending allGather(const void *in, void *out, DType dtype, uint64_t count) override {
    return on(in).allGather(in, out, dtype, count);
  }
  Pending barrier() override { return host->barrier(); }

private:
  Communicator &on(const void *p) { return onDevice(p) ? *nccl : *host; }

  std::unique_ptr<Communicator> host, nccl;
};

} // namespace

Expected<std::unique_ptr<Communicator>>
connectNccl(const WorldInfo &world, std::unique_ptr<Communicator> host,
            void *workQueue, int timeoutSeconds) {
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0)
    return Status::error(where(world) + ": no CUDA device (" +
                         (e != cudaSuccess ? cudaGetErrorString(e)
                                           : "none present") +
                         "); NCCL needs one GPU per rank");
  // As the CUDA device: a rank that sees one GPU uses it.
  int gpu = devices == 1 ? 0 : world.localRank;
  if (gpu >= devices)
    return Status::error(where(world) + ": LOCAL_RANK=" +
                         std::to_string(world.localRank) + " but this machine has " +
                         std::to_string(devices) + " GPU(s)");
  if ((e = cudaSetDevice(gpu)) != cudaSuccess)
    return Status::error(where(world) + ": cannot use GPU " + std::to_string(gpu) +
                         ": " + cudaGetErrorString(e));
  // Rank 0's id reaches the others over the host communicator; a rank 0
  // that cannot make one sends zeros, which every rank refuses alike.
  ncclUniqueId id = {};
  ncclResult_t made = world.rank == 0 ? ncclGetUniqueId(&id) : ncclSuccess;
  static_assert(sizeof id.internal % sizeof(int32_t) == 0, "an id of whole words");
  Status sent = host->broadcast(id.internal, DType::I32,
                                sizeof id.internal / sizeof(int32_t), 0)
                    .wait();
  if (made != ncclSuccess)
    return Status::error(where(world) + ": NCCL: " + ncclGetErrorString(made));
  if (!sent.ok())
    return sent.withPrefix("handing out NCCL's id: ");
  bool empty = true;
  for (char c : id.internal)
    empty &= c == 0;
  if (empty)
    return Status::error(where(world) + ": rank 0 could not make NCCL's id");
  ncclComm_t comm;
  if (ncclResult_t r = ncclCommInitRank(&comm, world.size, id, world.rank);
      r != ncclSuccess)
    return Status::error(where(world) + ": NCCL: " + ncclGetErrorString(r));
  cudaStream_t stream;
  if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) {
    ncclCommDestroy(comm);
    return Status::error(where(world) + ": NCCL's stream: " + cudaGetErrorString(e));
  }
  auto nccl = std::make_unique<NcclCommunicator>(
      world, comm, stream, static_cast<cudaStream_t>(workQueue), timeoutSeconds);
  return std::unique_ptr<Communicator>(
      std::make_unique<CudaRunCommunicator>(std::move(host), std::move(nccl)));
}

} // namespace sinter::rt
