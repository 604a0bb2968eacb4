//===- NcclCommunicator.cpp - Collectives across GPUs (NCCL) --------------===//
//
// Built with exceptions, for the rendezvous store (TcpStore.h).
//
//===----------------------------------------------------------------------===//

#include "dist/NcclCommunicator.h"
#include "dist/TcpStore.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
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
                   int timeoutSeconds, std::unique_ptr<TcpStoreServer> server,
                   std::unique_ptr<TcpStore> store)
      : world(std::move(world)), comm(comm), stream(stream),
        timeout(timeoutSeconds), server(std::move(server)),
        store(std::move(store)) {}

  ~NcclCommunicator() override {
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
    ncclResult_t r = call(t);
    if (r != ncclSuccess)
      return Pending::done(failure(what, ncclGetErrorString(r)));
    cudaEvent_t done;
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    cudaEventRecord(done, stream);
    // Waiting polls the event and NCCL's asynchronous error, with a
    // deadline: a lost peer ends in an error, never a hang.
    auto wait = [this, done, what]() -> Status {
      auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
      for (;;) {
        cudaError_t e = cudaEventQuery(done);
        if (e == cudaSuccess)
          break;
        ncclResult_t async = ncclSuccess;
        ncclCommGetAsyncError(comm, &async);
        if (async != ncclSuccess || e != cudaErrorNotReady ||
            std::chrono::steady_clock::now() > deadline) {
          ncclCommAbort(comm);
          cudaEventDestroy(done);
          return failure(what, async != ncclSuccess ? ncclGetErrorString(async)
                         : e != cudaErrorNotReady
                             ? cudaGetErrorString(e)
                             : "no progress within the timeout");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      cudaEventDestroy(done);
      return Status::success();
    };
    return Pending(std::async(std::launch::deferred, wait).share());
  }

  Status failure(const char *what, const std::string &why) const {
    return Status::error(where(world) + ": " + what + " failed: " + why +
                         " (another rank died or stopped responding)");
  }

  WorldInfo world;
  ncclComm_t comm;
  cudaStream_t stream;
  int timeout;
  std::unique_ptr<TcpStoreServer> server;
  std::unique_ptr<TcpStore> store;
};

} // namespace

Expected<std::unique_ptr<Communicator>> connectNccl(const WorldInfo &world,
                                                    int timeoutSeconds) {
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0)
    return Status::error(where(world) + ": no CUDA device (" +
                         (e != cudaSuccess ? cudaGetErrorString(e)
                                           : "none present") +
                         "); NCCL needs one GPU per rank");
  if (world.localRank >= devices)
    return Status::error(where(world) + ": LOCAL_RANK=" +
                         std::to_string(world.localRank) + " but this machine has " +
                         std::to_string(devices) + " GPU(s)");
  if ((e = cudaSetDevice(world.localRank)) != cudaSuccess)
    return Status::error(where(world) + ": cannot use GPU " +
                         std::to_string(world.localRank) + ": " +
                         cudaGetErrorString(e));
  try {
    std::chrono::milliseconds timeout(int64_t(timeoutSeconds) * 1000);
    Rendezvous rendezvous = openRendezvous(world, timeout);
    std::unique_ptr<TcpStoreServer> server = std::move(rendezvous.server);
    std::unique_ptr<TcpStore> store = std::move(rendezvous.store);
    ncclUniqueId id;
    if (world.rank == 0) {
      if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
        return Status::error(where(world) + ": NCCL: " + ncclGetErrorString(r));
      store->set("nccl_id", std::vector<char>(id.internal,
                                              id.internal + sizeof id.internal));
    } else {
      std::vector<char> bytes = store->get("nccl_id");
      if (bytes.size() != sizeof id.internal)
        return Status::error(where(world) + ": a corrupt NCCL id at the rendezvous");
      std::memcpy(id.internal, bytes.data(), bytes.size());
    }
    ncclComm_t comm;
    if (ncclResult_t r = ncclCommInitRank(&comm, world.size, id, world.rank);
        r != ncclSuccess)
      return Status::error(where(world) + ": NCCL: " + ncclGetErrorString(r));
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    return std::unique_ptr<Communicator>(std::make_unique<NcclCommunicator>(
        world, comm, stream, timeoutSeconds, std::move(server), std::move(store)));
  } catch (const std::exception &ex) {
    return Status::error(where(world) + ": " + ex.what());
  }
}

} // namespace sinter::rt
