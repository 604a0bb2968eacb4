//===- CudaStaging.cpp - A GPU's staging queues: two copy streams ---------===//

#include "cuda/CudaStaging.h"

#include "cuda/Errors.h"

namespace sinter::rt::cuda {
namespace {

class EventMark final : public QueueMark {
public:
  explicit EventMark(cudaEvent_t e) : event(e) {}
  ~EventMark() override { cudaEventDestroy(event); }
  cudaEvent_t event;
};

cudaEvent_t eventOf(const Mark &m) { return static_cast<const EventMark &>(*m).event; }

class CudaStaging final : public StagingQueues {
public:
  CudaStaging(int gpu, cudaStream_t compute) : gpu(gpu), compute(compute) {}
  ~CudaStaging() override {
    for (cudaStream_t s : {down, up})
      if (s) {
        cudaStreamSynchronize(s);
        cudaStreamDestroy(s);
      }
  }

  Status open() {
    SINTER_CUDA_CHECK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
    SINTER_CUDA_CHECK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    return Status::success();
  }

  Expected<void *> allocateHost(uint64_t bytes) override {
    SINTER_RT_RETURN_IF_ERROR(onGpu());
    void *p = nullptr;
    if (cudaError_t e = cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocDefault);
        e != cudaSuccess)
      return Status::error("cannot pin " + std::to_string(bytes) +
                           " bytes of host memory for staged collectives (" +
                           cudaGetErrorString(e) + ")");
    return p;
  }
  void releaseHost(void *p) override { cudaFreeHost(p); }

  Expected<Mark> markStep() override { return record(compute); }
  Expected<Mark> download(void *host, const void *device, uint64_t bytes,
                          const Mark &after) override {
    return copy(down, host, device, bytes, cudaMemcpyDeviceToHost, after);
  }
  Expected<Mark> upload(void *device, const void *host, uint64_t bytes,
                        const Mark &after) override {
    return copy(up, device, host, bytes, cudaMemcpyHostToDevice, after);
  }
  Status waitHost(const Mark &m) override {
    SINTER_RT_RETURN_IF_ERROR(onGpu());
    SINTER_CUDA_CHECK(cudaEventSynchronize(eventOf(m)));
    return Status::success();
  }
  Status waitStep(const Mark &m) override {
    SINTER_RT_RETURN_IF_ERROR(onGpu());
    SINTER_CUDA_CHECK(cudaStreamWaitEvent(compute, eventOf(m), 0));
    return Status::success();
  }
  bool passed(const Mark &m) override {
    return onGpu().ok() && cudaEventQuery(eventOf(m)) == cudaSuccess;
  }
  bool isDeviceMemory(const void *p) const override {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
      (void)cudaGetLastError(); // a host pointer the runtime never saw
      return false;
    }
    return a.type == cudaMemoryTypeDevice;
  }

private:
  /// The staged collectives' thread calls too: this rank's GPU must be
  /// current there, or CUDA would open a context on GPU 0.
  Status onGpu() const {
    int current = -1;
    if (cudaGetDevice(&current) == cudaSuccess && current == gpu)
      return Status::success();
    SINTER_CUDA_CHECK(cudaSetDevice(gpu));
    return Status::success();
  }
  Expected<Mark> record(cudaStream_t stream) {
    SINTER_RT_RETURN_IF_ERROR(onGpu());
    cudaEvent_t e = nullptr;
    SINTER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    Mark m = std::make_shared<EventMark>(e);
    SINTER_CUDA_CHECK(cudaEventRecord(e, stream));
    return m;
  }
  Expected<Mark> copy(cudaStream_t stream, void *to, const void *from, uint64_t bytes,
                      cudaMemcpyKind kind, const Mark &after) {
    SINTER_RT_RETURN_IF_ERROR(onGpu());
    if (after)
      SINTER_CUDA_CHECK(cudaStreamWaitEvent(stream, eventOf(after), 0));
    SINTER_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, kind, stream));
    return record(stream);
  }

  int gpu;
  cudaStream_t compute;
  cudaStream_t down = nullptr, up = nullptr;
};

} // namespace

Expected<std::unique_ptr<StagingQueues>> createCudaStaging(int gpu, cudaStream_t compute) {
  auto q = std::make_unique<CudaStaging>(gpu, compute);
  SINTER_RT_RETURN_IF_ERROR(q->open());
  return std::unique_ptr<StagingQueues>(std::move(q));
}

} // namespace sinter::rt::cuda
