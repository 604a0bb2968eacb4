//===- StagedUploads.cpp - Host-to-device copies beside the step's work ---===//

#include "cuda/StagedUploads.h"
#include "cuda/Errors.h"

#include <algorithm>
#include <cstring>

namespace sinter::rt::cuda {

StagedUploads::~StagedUploads() {
  for (Slot &s : slots) {
    for (cudaEvent_t e : {s.sent, s.moved})
      if (e) {
        cudaEventSynchronize(e);
        cudaEventDestroy(e);
      }
    if (s.pinned)
      cudaFreeHost(s.pinned);
    if (s.staged)
      cudaFree(s.staged);
  }
  if (copies)
    cudaStreamDestroy(copies);
}

Status StagedUploads::claim(Slot &s, uint64_t bytes) {
  if (!copies)
    SINTER_CUDA_CHECK(cudaStreamCreateWithFlags(&copies, cudaStreamNonBlocking));
  if (!s.sent) {
    SINTER_CUDA_CHECK(cudaEventCreateWithFlags(&s.sent, cudaEventDisableTiming));
    SINTER_CUDA_CHECK(cudaEventCreateWithFlags(&s.moved, cudaEventDisableTiming));
  }
  // The pinned bytes are free once sent; the device bytes are the copy
  // stream's to wait for (upload()).
  SINTER_CUDA_CHECK(cudaEventSynchronize(s.sent));
  if (s.capacity >= bytes)
    return Status::success();
  SINTER_CUDA_CHECK(cudaEventSynchronize(s.moved));
  if (s.pinned)
    SINTER_CUDA_CHECK(cudaFreeHost(s.pinned));
  if (s.staged)
    SINTER_CUDA_CHECK(cudaFree(s.staged));
  s.pinned = s.staged = nullptr;
  s.capacity = 0;
  // A slot holds the largest upload it has seen: inputs of one shape
  // allocate once.
  uint64_t size = std::max<uint64_t>(bytes, 4096);
  SINTER_CUDA_CHECK(cudaMallocHost(&s.pinned, size));
  SINTER_CUDA_CHECK(cudaMalloc(&s.staged, size));
  s.capacity = size;
  return Status::success();
}

Status StagedUploads::upload(cudaStream_t stream, void *device, const void *host,
                             uint64_t bytes) {
  if (bytes > kLargestStaged) {
    // From pageable memory the copy has taken the host's bytes when it
    // returns, so the host copy may change at once.
    SINTER_CUDA_CHECK(
        cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
    return Status::success();
  }
  Slot &s = slots[next];
  next = (next + 1) % slots.size();
  SINTER_RT_RETURN_IF_ERROR(claim(s, bytes));
  std::memcpy(s.pinned, host, bytes);
  // Sent now, beside the kernels queued on `stream`, once the slot's last
  // bytes have been moved out of its device buffer (an event never
  // recorded is no wait).
  SINTER_CUDA_CHECK(cudaStreamWaitEvent(copies, s.moved, 0));
  SINTER_CUDA_CHECK(
      cudaMemcpyAsync(s.staged, s.pinned, bytes, cudaMemcpyHostToDevice, copies));
  SINTER_CUDA_CHECK(cudaEventRecord(s.sent, copies));
  // Moved into place in order with the step's work.
  SINTER_CUDA_CHECK(cudaStreamWaitEvent(stream, s.sent, 0));
  SINTER_CUDA_CHECK(
      cudaMemcpyAsync(device, s.staged, bytes, cudaMemcpyDeviceToDevice, stream));
  SINTER_CUDA_CHECK(cudaEventRecord(s.moved, stream));
  return Status::success();
}

} // namespace sinter::rt::cuda
