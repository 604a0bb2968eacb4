//===- StagedUploads.cpp - Host-to-device copies that do not wait ---------===//

#include "cuda/StagedUploads.h"
#include "cuda/Errors.h"

#include <algorithm>
#include <cstring>

namespace sinter::rt::cuda {

StagedUploads::~StagedUploads() {
  for (Slot &s : slots) {
    if (s.copied) {
      cudaEventSynchronize(s.copied);
      cudaEventDestroy(s.copied);
    }
    if (s.pinned)
      cudaFreeHost(s.pinned);
  }
}

Status StagedUploads::claim(Slot &s, uint64_t bytes) {
  if (!s.copied)
    SINTER_CUDA_CHECK(cudaEventCreateWithFlags(&s.copied, cudaEventDisableTiming));
  else
    SINTER_CUDA_CHECK(cudaEventSynchronize(s.copied));
  if (s.capacity >= bytes)
    return Status::success();
  if (s.pinned)
    SINTER_CUDA_CHECK(cudaFreeHost(s.pinned));
  s.pinned = nullptr;
  s.capacity = 0;
  // A slot holds the largest upload it has seen: inputs of one shape
  // allocate once.
  uint64_t size = std::max<uint64_t>(bytes, 4096);
  SINTER_CUDA_CHECK(cudaMallocHost(&s.pinned, size));
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
  SINTER_CUDA_CHECK(
      cudaMemcpyAsync(device, s.pinned, bytes, cudaMemcpyHostToDevice, stream));
  SINTER_CUDA_CHECK(cudaEventRecord(s.copied, stream));
  return Status::success();
}

} // namespace sinter::rt::cuda
