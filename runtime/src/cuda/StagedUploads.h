//===- StagedUploads.h - Host-to-device copies beside the step's work -*- C++ -*-===//
//
// A copy from pageable host memory makes the host wait for the stream's
// queued work before it returns, so each micro-batch's inputs would drain
// the GPU's queue of kernels; and a copy queued on the step's stream waits
// for the kernels before it. Small uploads go through a ring of slots
// instead, each a pinned host buffer and a device buffer: the host bytes
// are copied into the slot, sent to its device buffer at once on a copy
// stream of their own (while the step's stream is still busy with the
// kernels queued before), and the step's stream moves them into place, a
// device-to-device copy, when it gets there. A slot is reused once both of
// its copies are done.
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
  /// larger ones (parameters at start) copy from pageable memory. The ring
  /// holds at most kSlots times the largest staged upload, on each side.
  static constexpr uint64_t kLargestStaged = uint64_t(64) << 20;
  static constexpr size_t kSlots = 8;

  /// Queues a copy of `bytes` from `host` to `device`, in order with the
  /// work queued on `stream` before it; `host` may change as soon as this
  /// returns.
  Status upload(cudaStream_t stream, void *device, const void *host, uint64_t bytes);
  /// The device memory its slots hold (as much again is pinned on the host).
  uint64_t deviceBytes() const {
    uint64_t bytes = 0;
    for (const Slot &s : slots)
      bytes += s.capacity;
    return bytes;
  }

private:
  struct Slot {
    void *pinned = nullptr; ///< host memory
    void *staged = nullptr; ///< device memory
    uint64_t capacity = 0;
    cudaEvent_t sent = nullptr;  ///< after its copy to `staged`
    cudaEvent_t moved = nullptr; ///< after the step's stream copied `staged`
  };
  /// Slot `s`, free and holding at least `bytes`.
  Status claim(Slot &s, uint64_t bytes);

  cudaStream_t copies = nullptr; ///< made at the first staged upload
  std::array<Slot, kSlots> slots;
  size_t next = 0;
};

} // namespace sinter::rt::cuda

#endif // SINTER_RT_CUDA_STAGEDUPLOADS_H
