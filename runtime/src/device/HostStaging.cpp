//===- HostStaging.cpp - The CPU's staging queues: a copy thread ----------===//
//
// The CPU's step runs on the calling thread, so its work queued so far is
// always done. Copies run in order on one thread of their own, each after
// the mark it waits for, so that the staged collectives' ordering runs for
// real on a machine without a GPU.
//
//===----------------------------------------------------------------------===//

#include "device/HostStaging.h"

#include "support/SerialWorker.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>

namespace sinter::rt {

QueueMark::~QueueMark() = default;
StagingQueues::~StagingQueues() = default;

namespace {

class HostMark final : public QueueMark {
public:
  HostMark() : done(promise.get_future().share()) {}
  void pass() { promise.set_value(); }
  void wait() const { done.wait(); }
  bool passed() const {
    return done.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

private:
  std::promise<void> promise;
  std::shared_future<void> done;
};

class HostStagingQueues final : public StagingQueues {
public:
  ~HostStagingQueues() override { worker.stop(); }

  Expected<void *> allocateHost(uint64_t bytes) override {
    void *p = std::aligned_alloc(64, (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64);
    if (!p)
      return Status::error("out of memory allocating " + std::to_string(bytes) +
                           " bytes of staging buffers");
    return p;
  }
  void releaseHost(void *p) override { std::free(p); }

  Expected<Mark> markStep() override {
    auto m = std::make_shared<HostMark>();
    m->pass(); // the step's work so far is done: it ran on this thread
    return Mark(m);
  }
  Expected<Mark> download(void *host, const void *device, uint64_t bytes,
                          const Mark &after) override {
    return queueCopy(host, device, bytes, after);
  }
  Expected<Mark> upload(void *device, const void *host, uint64_t bytes,
                        const Mark &after) override {
    return queueCopy(device, host, bytes, after);
  }
  Status waitHost(const Mark &m) override {
    static_cast<const HostMark &>(*m).wait();
    return Status::success();
  }
  // The step's work runs on the calling thread: it waits as the host.
  Status waitStep(const Mark &m) override { return waitHost(m); }
  bool passed(const Mark &m) override {
    return static_cast<const HostMark &>(*m).passed();
  }
  bool isDeviceMemory(const void *) const override { return true; }

private:
  Expected<Mark> queueCopy(void *to, const void *from, uint64_t bytes, const Mark &after) {
    auto done = std::make_shared<HostMark>();
    worker.post([=] {
      if (after)
        static_cast<const HostMark &>(*after).wait();
      std::memcpy(to, from, bytes);
      done->pass();
    });
    return Mark(done);
  }

  SerialWorker worker; ///< last: its copies use the members above
};

} // namespace

std::unique_ptr<StagingQueues> createHostStagingQueues() {
  return std::make_unique<HostStagingQueues>();
}

} // namespace sinter::rt
