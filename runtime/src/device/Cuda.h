//===- Cuda.h - Opening a CUDA GPU, where the runtime has one -----*- C++ -*-===//
//
// The CUDA device lives in its own library (runtime/src/cuda), linked into
// programs compiled with `device: CUDA` only: its entry point is weak, null
// in a CPU program.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_DEVICE_CUDA_H
#define SINTER_RT_DEVICE_CUDA_H

#include "device/Device.h"

namespace sinter::rt {

/// GPU `index` (the rank's LOCAL_RANK) with its streams, its kernels loaded
/// and its libraries' handles made; opened once per process. An error names
/// what is missing (no driver, no GPU, too few GPUs) and what to do.
Expected<Device *> openCudaDevice(int index) __attribute__((weak));

} // namespace sinter::rt

#endif // SINTER_RT_DEVICE_CUDA_H
