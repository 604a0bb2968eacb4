//===- Driver.h - The CUDA driver calls the runtime makes -------*- C++ -*-===//
//
// Modules are loaded and kernels launched through the driver API. Programs
// do not link libcuda: the entry points come from the CUDA runtime
// (cudaGetDriverEntryPointByVersion), so a program without a driver starts,
// and says that it needs one.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_CUDA_DRIVER_H
#define SINTER_RT_CUDA_DRIVER_H

#include "sinter/rt/Status.h"

#include <cudaTypedefs.h>

namespace sinter::rt::cuda {

struct Driver {
  PFN_cuModuleLoadData_v2000 moduleLoadData = nullptr;
  PFN_cuModuleGetFunction_v2000 moduleGetFunction = nullptr;
  PFN_cuModuleUnload_v2000 moduleUnload = nullptr;
  PFN_cuLaunchKernel_v4000 launchKernel = nullptr;
  PFN_cuFuncSetAttribute_v9000 funcSetAttribute = nullptr;
  PFN_cuGetErrorName_v6000 getErrorName = nullptr;
  PFN_cuGetErrorString_v6000 getErrorString = nullptr;
};

/// The driver's entry points, found once; null before the first success.
const Driver *driver();
Status loadDriver();

} // namespace sinter::rt::cuda

#endif // SINTER_RT_CUDA_DRIVER_H
