//===- StagingQueues.h - Device memory through host buffers -------*- C++ -*-===//
//
// What collectives staged through host memory (dist/StagedCommunicator.h)
// need of a device: host buffers the device copies to and from at full
// speed (pinned, on a GPU), copies on queues of their own beside the step's
// work, and marks that order those copies against the step's work and each
// other. On a GPU a queue is a CUDA stream and a mark an event. The CPU's
// queue is a thread, which lets the staged path run and be tested where
// there is no GPU.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DEVICE_STAGINGQUEUES_H
#define SINTER_RT_DEVICE_STAGINGQUEUES_H

#include "sinter/rt/Status.h"

#include <cstdint>
#include <memory>

namespace sinter::rt {

/// A point in a queue: passed once the work queued before it is done.
class QueueMark {
public:
  virtual ~QueueMark();
};
using Mark = std::shared_ptr<QueueMark>;

class StagingQueues {
public:
  virtual ~StagingQueues();

  /// Host memory of at least `bytes` that the copies below read and write.
  virtual Expected<void *> allocateHost(uint64_t bytes) = 0;
  virtual void releaseHost(void *p) = 0;

  /// Marks the step's work queued so far.
  virtual Expected<Mark> markStep() = 0;
  /// Queues a copy of `bytes` from device memory to host memory, to start
  /// once `after` has passed; its mark passes when it is done.
  virtual Expected<Mark> download(void *host, const void *device, uint64_t bytes,
                                  const Mark &after) = 0;
  /// The same from host memory to device memory.
  virtual Expected<Mark> upload(void *device, const void *host, uint64_t bytes,
                                const Mark &after) = 0;
  /// Blocks the host until `m` passed; the failure of what it marks.
  virtual Status waitHost(const Mark &m) = 0;
  /// Makes the step's later work wait for `m`, without the host waiting.
  virtual Status waitStep(const Mark &m) = 0;
  /// Whether `m` passed, without waiting.
  virtual bool passed(const Mark &m) = 0;
  /// Whether `p` is the device's memory, which is staged; other memory
  /// is the host's already.
  virtual bool isDeviceMemory(const void *p) const = 0;
};

} // namespace sinter::rt

#endif // SINTER_RT_DEVICE_STAGINGQUEUES_H
