//===- Driver.cpp - The CUDA driver calls the runtime makes -------------===//

#include "cuda/Driver.h"

#include "cuda/Errors.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <string>

namespace sinter::rt::cuda {
namespace {

Driver entries;
bool loaded = false;

/// One entry point, as of CUDA `version` (the ABI the typedef names).
template <typename F>
Status find(const char *symbol, unsigned version, F &out) {
  void *p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  SINTER_RT_RETURN_IF_ERROR(check(
      cudaGetDriverEntryPointByVersion(symbol, &p, version, cudaEnableDefault,
                                       &found),
      "cudaGetDriverEntryPointByVersion"));
  if (found != cudaDriverEntryPointSuccess || !p)
    return Status::error(std::string("the CUDA driver has no ") + symbol +
                         "; update the NVIDIA driver");
  out = reinterpret_cast<F>(p);
  return Status::success();
}

} // namespace

const Driver *driver() { return loaded ? &entries : nullptr; }

Status loadDriver() {
  static std::mutex lock;
  std::lock_guard<std::mutex> hold(lock);
  if (loaded)
    return Status::success();
  Driver d;
  SINTER_RT_RETURN_IF_ERROR(find("cuGetErrorName", 6000, d.getErrorName));
  SINTER_RT_RETURN_IF_ERROR(find("cuGetErrorString", 6000, d.getErrorString));
  SINTER_RT_RETURN_IF_ERROR(find("cuModuleLoadData", 2000, d.moduleLoadData));
  SINTER_RT_RETURN_IF_ERROR(find("cuModuleGetFunction", 2000, d.moduleGetFunction));
  SINTER_RT_RETURN_IF_ERROR(find("cuModuleUnload", 2000, d.moduleUnload));
  SINTER_RT_RETURN_IF_ERROR(find("cuLaunchKernel", 4000, d.launchKernel));
  SINTER_RT_RETURN_IF_ERROR(find("cuFuncSetAttribute", 9000, d.funcSetAttribute));
  entries = d;
  loaded = true;
  return Status::success();
}

} // namespace sinter::rt::cuda
