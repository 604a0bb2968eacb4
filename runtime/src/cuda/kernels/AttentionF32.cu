//===- AttentionF32.cu - The fused f32 attention kernels for the GPU ------===//
//
// AttentionF32Kernels.h's bodies as CUDA kernels, one of each for head sizes
// 32 and 64 (a thread's accumulators are sized by it). nvcc builds them
// into one fatbinary (sm_80 and sm_90 cubins, sm_90's PTX) that the runtime
// carries and loads at the first f32 attention (AttentionF32.cpp); their
// names are unmangled so that the driver finds them.
//
//===----------------------------------------------------------------------===//

#include "AttentionF32Kernels.h"

using namespace sinter::rt::cuda::kernels;

namespace {

/// CUDA's thread: its indices, the block's barrier and a warp's shuffle.
struct DeviceThread {
  int thread, blockX, blockY, gridY;
  __device__ __forceinline__ void sync() { __syncthreads(); }
  __device__ __forceinline__ float shuffleXor(float v, int mask) {
    return __shfl_xor_sync(0xffffffffu, v, mask);
  }
};

__device__ __forceinline__ DeviceThread self() {
  return {int(threadIdx.x), int(blockIdx.x), int(blockIdx.y), int(gridDim.y)};
}

} // namespace

extern __shared__ __align__(16) float sinterAttentionShared[];

#define SINTER_ATTENTION_KERNELS(D)                                                     \
  extern "C" __global__ void __launch_bounds__(kThreads)                                \
      sinter_attention_f32_forward_##D(AttentionArgs a) {                               \
    DeviceThread th = self();                                                           \
    attentionForward<D>(th, a, sinterAttentionShared);                                  \
  }                                                                                     \
  extern "C" __global__ void __launch_bounds__(kThreads)                                \
      sinter_attention_f32_delta_##D(AttentionArgs a, long long rows) {                 \
    DeviceThread th = self();                                                           \
    attentionDelta<D>(th, a, rows);                                                     \
  }                                                                                     \
  extern "C" __global__ void __launch_bounds__(kThreads)                                \
      sinter_attention_f32_backward_keys_##D(AttentionArgs a) {                         \
    DeviceThread th = self();                                                           \
    attentionBackwardKeys<D>(th, a, sinterAttentionShared);                             \
  }                                                                                     \
  extern "C" __global__ void __launch_bounds__(kThreads)                                \
      sinter_attention_f32_backward_queries_##D(AttentionArgs a) {                      \
    DeviceThread th = self();                                                           \
    attentionBackwardQueries<D>(th, a, sinterAttentionShared);                          \
  }

SINTER_ATTENTION_KERNELS(32)
SINTER_ATTENTION_KERNELS(64)
