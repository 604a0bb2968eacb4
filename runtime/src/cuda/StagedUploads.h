//===- StagedUploads.h - Host-to-device copies that do not wait -*- C++ -*-===//
//
// A copy from pageable host memory makes the host wait for the stream's
// queued work before it returns, so each micro-batch's inputs would drain
// the GPU's queue of kernels. Small uploads go through a ring of pinned
// buffers instead: the host bytes are copied into a slot, the slot's copy
// to the device is queued behind the step's work, and the host moves on.
// A slot is reused only once its previous copy is done.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_CUDA_STAGEDUPLOADS_H
#define SINTER_RT_CUDA_STAGEDUPLOADS_H

#include "sinter/rt/Status.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>

namespace sinter::rt::cuda {

class StagedUploads {
public:
  StagedUploads() = default;
  StagedUploads(const StagedUploads &) = delete;
  StagedUploads &operator=(const StagedUploads &) = delete;
  ~StagedUploads();

  /// Uploads of at most this many bytes are staged (inputs, scalars);
  /// larger ones (parameters at start) copy from pageable memory.
  static constexpr uint64_t kLargestStaged = uint64_t(64) << 20;

  /// Queues a copy of `bytes` from `host` to `device` on `stream`; `host`
  /// may change as soon as this returns.
  Status upload(cudaStream_t stream, void *device, const void *host, uint64_t bytes);

private:
  struct Slot {
    void *pinned = nullptr;
    uint64_t capacity = 0;
    cudaEvent_t copied = nullptr; ///< recorded after the slot's last copy
  };
  /// Slot `s`, free and holding at least `bytes`.
  Status claim(Slot &s, uint64_t bytes);

  std::array<Slot, 8> slots;
  size_t next = 0;
};

} // namespace sinter::rt::cuda

#endif // SINTER_RT_CUDA_STAGEDUPLOADS_H
