//===- AttentionF32.cpp - Fused f32 attention on Sinter's own kernels -----===//
//
// abi.h's packed self-attention in f32 (cuDNN's fused attention takes bf16
// and fp16 only): kernels/AttentionF32Kernels.h's four kernels, which nvcc
// built into a fatbinary that this file carries. The module is loaded at
// the first f32 attention. The forward call writes o and the row
// statistics (into the workspace when the step keeps none); the backward
// call computes each row's dO . o into the workspace, then dk and dv, then
// dq, each in a fixed order.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "cuda/Driver.h"
#include "cuda/Errors.h"
#include "cuda/kernels/AttentionF32Kernels.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

// The fatbinary nvcc built from kernels/AttentionF32.cu.
asm(".section .rodata\n"
    ".balign 16\n"
    "sinterAttentionF32Image:\n"
    ".incbin \"" SINTER_ATTENTION_F32_FATBIN "\"\n"
    ".byte 0\n"
    ".previous\n");
extern "C" const unsigned char sinterAttentionF32Image[];

namespace sinter::rt::cuda {

namespace k = kernels;

/// The loaded module's kernels, for head sizes 32 and 64.
struct CudaDevice::AttentionF32 {
  CUmodule module = nullptr;
  struct Kernels {
    CUfunction forward, delta, keys, queries;
  } bySize[2];
};

void CudaDevice::AttentionF32Unload::operator()(AttentionF32 *kernels) const {
  if (kernels->module && driver())
    driver()->moduleUnload(kernels->module);
  delete kernels;
}

namespace {

std::string shapeName(const int64_t s[7]) {
  return "[batch " + std::to_string(s[0]) + ", heads " + std::to_string(s[1]) + ", t " +
         std::to_string(s[2]) + ", d " + std::to_string(s[4]) + "]";
}

/// Up to 227 KiB on sm_90 and 163 on sm_80; more than the default 48 asks.
Status allowShared(CUfunction f, int floats) {
  return check(driver()->funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          floats * int(sizeof(float))),
               "cuFuncSetAttribute (shared memory of the f32 attention)");
}

bool aligned(const void *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

} // namespace

Expected<CudaDevice::AttentionF32 *> CudaDevice::attentionF32Kernels() {
  if (attentionF32)
    return attentionF32.get();
  std::unique_ptr<AttentionF32, AttentionF32Unload> loaded(new AttentionF32());
  const Driver &d = *driver();
  SINTER_CUDA_CHECK(d.moduleLoadData(&loaded->module, sinterAttentionF32Image));
  auto get = [&](CUfunction &f, std::string name, int size) {
    name += "_" + std::to_string(size);
    return check(d.moduleGetFunction(&f, loaded->module, name.c_str()), "cuModuleGetFunction")
        .withPrefix(name + ": ");
  };
  for (int i = 0; i < 2; ++i) {
    int size = i == 0 ? 32 : 64;
    AttentionF32::Kernels &ks = loaded->bySize[i];
    SINTER_RT_RETURN_IF_ERROR(get(ks.forward, "sinter_attention_f32_forward", size));
    SINTER_RT_RETURN_IF_ERROR(get(ks.delta, "sinter_attention_f32_delta", size));
    SINTER_RT_RETURN_IF_ERROR(get(ks.keys, "sinter_attention_f32_backward_keys", size));
    SINTER_RT_RETURN_IF_ERROR(get(ks.queries, "sinter_attention_f32_backward_queries", size));
    int shared[3] = {size == 32 ? k::forwardSharedFloats<32>() : k::forwardSharedFloats<64>(),
                     size == 32 ? k::keyValueSharedFloats<32>()
                                : k::keyValueSharedFloats<64>(),
                     size == 32 ? k::querySharedFloats<32>() : k::querySharedFloats<64>()};
    SINTER_RT_RETURN_IF_ERROR(allowShared(ks.forward, shared[0]));
    SINTER_RT_RETURN_IF_ERROR(allowShared(ks.keys, shared[1]));
    SINTER_RT_RETURN_IF_ERROR(allowShared(ks.queries, shared[2]));
  }
  attentionF32 = std::move(loaded);
  return attentionF32.get();
}

/// The kernels' arguments for abi.h's packed shape [batch, heads, t, t, d,
/// d, causal]: q, k and v (and their gradients) the three blocks of a row
/// of qkv, o (and dO) [batch, t, heads, d].
static k::AttentionArgs packedArgs(const float *qkv, const int64_t s[7]) {
  const int64_t t = s[2], heads = s[1], d = s[4], c = heads * d;
  k::AttentionArgs a{};
  a.q = qkv;
  a.k = qkv + c;
  a.v = qkv + 2 * c;
  a.qkv = {t * 3 * c, d, 3 * c};
  a.out = {t * c, d, c};
  a.heads = int(heads);
  a.t = int(t);
  a.causal = int(s[6]);
  a.scale = float(1.0 / std::sqrt(double(d)));
  return a;
}

Status CudaDevice::launchAttentionF32(CUfunction f, int64_t gridX, int64_t gridY,
                                      int sharedFloats, void **params) {
  return check(driver()->launchKernel(f, unsigned(gridX), unsigned(gridY), 1, k::kThreads, 1,
                                      1, unsigned(sharedFloats * int(sizeof(float))),
                                      reinterpret_cast<CUstream>(compute), params, nullptr),
               "cuLaunchKernel");
}

/// Whether the kernels can take the call's shape and pointers.
static Status checkF32Call(const int64_t s[7], std::initializer_list<const void *> pointers) {
  if (!k::headSizeBuilt(s[4]) || s[2] != s[3] || s[4] != s[5])
    return Status::error("internal error: the f32 attention kernels take one t and head "
                         "sizes 32 or 64");
  if (s[0] * s[1] > 65535 || s[2] > (int64_t(1) << 30))
    return Status::error("more (batch, head) pairs than a grid's 65,535 rows");
  for (const void *p : pointers)
    if (!aligned(p))
      return Status::error("internal error: an f32 attention buffer is not 16-byte aligned");
  return Status::success();
}

void CudaDevice::attentionF32Forward(const float *qkv, float *o, float *stats,
                                     const int64_t shape[7]) {
  if (skipsWork())
    return;
  std::string prefix = "attention f32 " + shapeName(shape) + ": ";
  if (failed(checkF32Call(shape, {qkv, o, stats}).withPrefix(prefix)))
    return;
  Expected<AttentionF32 *> loaded = attentionF32Kernels();
  if (failed(loaded.status().withPrefix(prefix)))
    return;
  const int64_t pairs = shape[0] * shape[1], rows = pairs * shape[2];
  if (!stats) { // the step keeps no statistics: they go to the workspace
    Expected<void *> scratchStats = workspace(uint64_t(rows) * sizeof(float));
    if (failed(scratchStats.status().withPrefix(prefix)))
      return;
    stats = static_cast<float *>(*scratchStats);
  }
  k::AttentionArgs a = packedArgs(qkv, shape);
  a.o = o;
  a.lse = stats;
  void *params[] = {&a};
  bool small = shape[4] == 32;
  failed(launchAttentionF32((*loaded)->bySize[small ? 0 : 1].forward, k::tilesOf(int(shape[2])),
                            pairs,
                            small ? k::forwardSharedFloats<32>() : k::forwardSharedFloats<64>(),
                            params)
             .withPrefix(prefix));
}

void CudaDevice::attentionF32Backward(const float *qkv, const float *o, const float *stats,
                                      const float *gradO, float *gradQkv,
                                      const int64_t shape[7]) {
  if (skipsWork())
    return;
  std::string prefix = "attention f32 backward " + shapeName(shape) + ": ";
  if (failed(checkF32Call(shape, {qkv, o, stats, gradO, gradQkv}).withPrefix(prefix)))
    return;
  Expected<AttentionF32 *> loaded = attentionF32Kernels();
  if (failed(loaded.status().withPrefix(prefix)))
    return;
  const int64_t pairs = shape[0] * shape[1], rows = pairs * shape[2];
  Expected<void *> delta = workspace(uint64_t(rows) * sizeof(float));
  if (failed(delta.status().withPrefix(prefix)))
    return;
  k::AttentionArgs a = packedArgs(qkv, shape);
  const int64_t c = shape[1] * shape[4];
  a.o = const_cast<float *>(o);
  a.lse = const_cast<float *>(stats);
  a.gradO = gradO;
  a.gradQ = gradQkv;
  a.gradK = gradQkv + c;
  a.gradV = gradQkv + 2 * c;
  a.delta = static_cast<float *>(*delta);
  bool small = shape[4] == 32;
  const AttentionF32::Kernels &ks = (*loaded)->bySize[small ? 0 : 1];
  const int tiles = k::tilesOf(int(shape[2]));
  long long deltaRows = rows;
  void *params[] = {&a}, *deltaParams[] = {&a, &deltaRows};
  Status s = launchAttentionF32(ks.delta, k::deltaBlocks(rows), 1, 0, deltaParams);
  if (s.ok())
    s = launchAttentionF32(ks.keys, tiles, pairs,
                           small ? k::keyValueSharedFloats<32>() : k::keyValueSharedFloats<64>(),
                           params);
  if (s.ok())
    s = launchAttentionF32(ks.queries, tiles, pairs,
                           small ? k::querySharedFloats<32>() : k::querySharedFloats<64>(),
                           params);
  failed(s.withPrefix(prefix));
}

} // namespace sinter::rt::cuda
