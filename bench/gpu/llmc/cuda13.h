// Force-included (nvcc -include) when llm.c is built as the GPU check's
// peer: CUDA 13 takes cudaMemAdvise's location as a cudaMemLocation, where
// llm.c passes a device number. This overload takes the number, as CUDA 12
// did, so its sources build unchanged.
#pragma once
#include <cuda_runtime.h>

#if CUDART_VERSION >= 13000
inline cudaError_t cudaMemAdvise(const void *ptr, size_t bytes, cudaMemoryAdvise advice,
                                 int device) {
  cudaMemLocation where{};
  where.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  where.id = device == cudaCpuDeviceId ? 0 : device;
  return cudaMemAdvise(ptr, bytes, advice, where);
}
#endif
