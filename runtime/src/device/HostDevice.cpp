//===- HostDevice.cpp - The CPU as a device -----------------------------===//

#include "device/Device.h"
#include "device/HostConvolutions.h"
#include "device/HostStaging.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace sinter::rt {

Device::~Device() = default;

namespace {

std::atomic<bool> winogradConvolutions{false};

class HostDevice final : public Device {
public:
  std::string describe() const override { return "cpu"; }
  bool hostVisible() const override { return true; }
  Expected<void *> allocate(uint64_t bytes) override {
    // Vector loads want 64-byte alignment; aligned_alloc wants a multiple.
    uint64_t size = (bytes + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, size ? size : 64);
    if (!p)
      return Status::error("out of memory allocating " + std::to_string(size) +
                           " bytes");
    std::memset(p, 0, size);
    return p;
  }
  void release(void *p) override { std::free(p); }
  Expected<void *> allocateHost(uint64_t bytes) override { return allocate(bytes); }
  void releaseHost(void *p) override { std::free(p); }
  Status allowTf32Matmuls(bool allowed) override {
    return allowed ? Status::error("precision.matmul TF32 needs a GPU's tensor "
                                   "cores; the CPU multiplies f32 in f32")
                   : Status::success();
  }
  std::optional<FreeMemory> freeMemory() const override { return hostFreeMemory(); }
  Status allowNondeterministicAlgorithms(bool allowed) override {
    return allowed ? Status::error("precision.deterministic false needs a GPU: every "
                                   "CPU kernel is deterministic")
                   : Status::success();
  }
  Status allowWinogradConvolutions(bool allowed) override {
    winogradConvolutions.store(allowed);
    return Status::success();
  }
  Status upload(void *device, const void *host, uint64_t bytes) override {
    if (device != host)
      std::memmove(device, host, bytes);
    return Status::success();
  }
  Status download(void *host, const void *device, uint64_t bytes) override {
    if (device != host)
      std::memmove(host, device, bytes);
    return Status::success();
  }
  Status copy(void *dst, const void *src, uint64_t bytes) override {
    std::memmove(dst, src, bytes);
    return Status::success();
  }
  Status synchronize() override { return Status::success(); }
  Expected<StagingQueues *> stagingQueues() override {
    std::call_once(made, [&] { staging = createHostStagingQueues(); });
    return staging.get();
  }

private:
  std::once_flag made;
  std::unique_ptr<StagingQueues> staging;
};

} // namespace

Device &hostDevice() {
  static HostDevice device;
  return device;
}

bool hostWinogradConvolutions() { return winogradConvolutions.load(); }

} // namespace sinter::rt
