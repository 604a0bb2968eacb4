//===- Device.h - Where a step's buffers live and its work runs -*- C++ -*-===//
//
// A compiled step runs on one device: the CPU, whose buffers are host
// memory, or a CUDA GPU, whose buffers are device memory the host reaches
// only by copies. The program (Trainer, Evaluator, checkpoints) works on
// host memory and asks the device for copies at the points where either
// side needs the other's values; on the CPU each copy is nothing.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DEVICE_DEVICE_H
#define SINTER_RT_DEVICE_DEVICE_H

#include "device/HostMemory.h"
#include "device/StagingQueues.h"
#include "sinter/rt/Status.h"

#include <cstdint>
#include <optional>
#include <string>

namespace sinter::rt {

class Device {
public:
  virtual ~Device();
  /// "cpu", or "cuda:N" with the GPU's name.
  virtual std::string describe() const = 0;
  /// Whether the host can read and write the device's memory directly.
  virtual bool hostVisible() const = 0;
  /// `bytes` of zeroed memory, aligned to 64 bytes at least.
  virtual Expected<void *> allocate(uint64_t bytes) = 0;
  virtual void release(void *p) = 0;
  /// `bytes` of host memory that download() fills at the bus's full speed
  /// (pinned on a GPU, so that no pageable bounce buffer is in the way),
  /// aligned to 64 bytes; releaseHost() frees it.
  virtual Expected<void *> allocateHost(uint64_t bytes) = 0;
  virtual void releaseHost(void *p) = 0;
  /// Copies in order with the device's work: an upload is seen by every
  /// later step, a download waits for every earlier one.
  virtual Status upload(void *device, const void *host, uint64_t bytes) = 0;
  virtual Status download(void *host, const void *device, uint64_t bytes) = 0;
  virtual Status copy(void *dst, const void *src, uint64_t bytes) = 0;
  /// Waits for all the work given to the device; the first error of it.
  virtual Status synchronize() = 0;
  /// precision.matmul TF32: f32 matmuls may round their inputs to TF32 on
  /// tensor cores. An error where the device has none.
  virtual Status allowTf32Matmuls(bool allowed) = 0;
  /// precision.convolution WINOGRAD: f32 convolutions may run oneDNN's
  /// Winograd kernels. An error where the device has none.
  virtual Status allowWinogradConvolutions(bool allowed) = 0;
  /// precision.deterministic false: library calls may sum in an order that
  /// changes between runs. An error where the device has no such calls.
  virtual Status allowNondeterministicAlgorithms(bool allowed) = 0;
  /// The memory allocate() may still take, where the device can say.
  virtual std::optional<FreeMemory> freeMemory() const = 0;
  /// The queue the device's work runs on in order (a cudaStream_t), for
  /// collectives that must start after it; null where work runs at once.
  virtual void *workQueue() const { return nullptr; }
  /// What the device did over the run worth a line in its log (how its
  /// work was launched); empty when there is nothing to say.
  virtual std::string activity() const { return ""; }
  /// The queues that stage collectives through host memory, made at the
  /// first call and owned by the device.
  virtual Expected<StagingQueues *> stagingQueues() = 0;
};

/// The CPU: host memory, copies by memcpy.
Device &hostDevice();

} // namespace sinter::rt

#endif // SINTER_RT_DEVICE_DEVICE_H
