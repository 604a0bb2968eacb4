//===- HostStaging.h - The CPU's staging queues -------------------*- C++ -*-===//
#ifndef SINTER_RT_DEVICE_HOSTSTAGING_H
#define SINTER_RT_DEVICE_HOSTSTAGING_H

#include "device/StagingQueues.h"

namespace sinter::rt {

/// Staging queues over host memory: every buffer counts as the device's,
/// and copies run in order on a thread of their own.
std::unique_ptr<StagingQueues> createHostStagingQueues();

} // namespace sinter::rt

#endif // SINTER_RT_DEVICE_HOSTSTAGING_H
