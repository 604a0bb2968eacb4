//===- NcclConnect.cpp - Setting up a CUDA run's communicator (NCCL) ------===//
//
// connectNccl: picks this rank's GPU, hands out NCCL's id over the host
// communicator, sets NCCL up non-blocking with a deadline, and returns the
// communicator that sends each collective where its memory is.
//
//===----------------------------------------------------------------------===//

#include "dist/NcclCommunicator.h"
#include "dist/NcclInternal.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace sinter::rt {
namespace {

/// Whether `p` is device memory (of any GPU).
bool onDevice(const void *p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError(); // a host pointer the runtime never saw
    return false;
  }
  return a.type == cudaMemoryTypeDevice;
}

/// A CUDA run's communicator: each collective goes where its memory is,
/// device memory to NCCL, host memory to the host engine.
class CudaRunCommunicator final : public Communicator {
public:
  CudaRunCommunicator(std::unique_ptr<Communicator> host,
                      std::unique_ptr<Communicator> nccl)
      : host(std::move(host)), nccl(std::move(nccl)) {}

  int rank() const override { return host->rank(); }
  int size() const override { return host->size(); }
  std::string engine() const override {
    return host->runsCollectives() ? "NCCL, host values over " + host->engine() : "NCCL";
  }
  std::string lostPeer() override { return host->lostPeer(); }
  Pending allReduce(void *data, DType dtype, uint64_t count, ReduceOp op) override {
    return on(data).allReduce(data, dtype, count, op);
  }
  Pending broadcast(void *data, DType dtype, uint64_t count, int root) override {
    return on(data).broadcast(data, dtype, count, root);
  }
  Pending reduce(void *data, DType dtype, uint64_t count, ReduceOp op, int root) override {
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

  // Declared first, destroyed last: NCCL's watchdog asks it for lost ranks.
  std::unique_ptr<Communicator> host;
  std::unique_ptr<Communicator> nccl;
};

/// Polls a communicator being set up until it is ready, with a deadline
/// and the rendezvous's word on lost ranks; aborts it on failure.
Status awaitSetUp(const WorldInfo &world, ncclComm_t comm, ncclResult_t started,
                  int timeoutSeconds, Communicator &host) {
  auto deadline = Clock::now() + std::chrono::seconds(timeoutSeconds);
  auto asked = Clock::now();
  ncclResult_t state = started;
  while (state == ncclInProgress || state == ncclSuccess) {
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess)
      state = ncclInternalError;
    if (state == ncclSuccess)
      return Status::success();
    if (state != ncclInProgress)
      break;
    std::string why;
    if (Clock::now() - asked > kAskAfter) {
      asked = Clock::now();
      if (std::string lost = host.lostPeer(); !lost.empty())
        why = "lost " + lost;
    }
    if (why.empty() && Clock::now() > deadline)
      why = "no progress within " + std::to_string(timeoutSeconds) +
            " s (another rank died or stopped responding)";
    if (!why.empty()) {
      ncclCommAbort(comm);
      return Status::error(where(world) + ": NCCL's set-up failed: " + why);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ncclCommAbort(comm);
  return Status::error(where(world) + ": NCCL's set-up failed: " +
                       ncclGetErrorString(state));
}

} // namespace

Expected<std::unique_ptr<Communicator>>
connectNccl(const WorldInfo &world, std::unique_ptr<Communicator> host,
            void *workQueue, int timeoutSeconds) {
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0)
    return Status::error(where(world) + ": no CUDA device (" +
                         (e != cudaSuccess ? cudaGetErrorString(e) : "none present") +
                         "); NCCL needs one GPU per rank");
  // As the CUDA device: a rank that sees one GPU uses it.
  int gpu = devices == 1 ? 0 : world.localRank;
  if (gpu >= devices)
    return Status::error(where(world) + ": LOCAL_RANK=" + std::to_string(world.localRank) +
                         " but this machine has " + std::to_string(devices) +
                         " GPU(s); NCCL needs one GPU per rank (parallel.collectives: "
                         "GLOO lets ranks share a GPU)");
  if ((e = cudaSetDevice(gpu)) != cudaSuccess)
    return Status::error(where(world) + ": cannot use GPU " + std::to_string(gpu) + ": " +
                         cudaGetErrorString(e));
  // Rank 0's id reaches the others over the host communicator; a rank 0
  // that cannot make one sends zeros, which every rank refuses alike.
  ncclUniqueId id = {};
  ncclResult_t made = world.rank == 0 ? ncclGetUniqueId(&id) : ncclSuccess;
  static_assert(sizeof id.internal % sizeof(int32_t) == 0, "an id of whole words");
  Status sent =
      host->broadcast(id.internal, DType::I32, sizeof id.internal / sizeof(int32_t), 0)
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
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0; // no call may hang this thread (see NcclCommunicator.cpp)
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRankConfig(&comm, world.size, id, world.rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    if (comm)
      ncclCommAbort(comm);
    return Status::error(where(world) + ": NCCL's set-up failed: " + ncclGetErrorString(r));
  }
  SINTER_RT_RETURN_IF_ERROR(awaitSetUp(world, comm, r, timeoutSeconds, *host));
  cudaStream_t stream;
  if ((e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) {
    ncclCommAbort(comm);
    return Status::error(where(world) + ": NCCL's stream: " + cudaGetErrorString(e));
  }
  Communicator *hostComm = host.get();
  std::unique_ptr<Communicator> nccl = makeNcclCommunicator(
      world, gpu, comm, stream, static_cast<cudaStream_t>(workQueue), timeoutSeconds,
      [hostComm] { return hostComm->lostPeer(); });
  return std::unique_ptr<Communicator>(
      std::make_unique<CudaRunCommunicator>(std::move(host), std::move(nccl)));
}

} // namespace sinter::rt
