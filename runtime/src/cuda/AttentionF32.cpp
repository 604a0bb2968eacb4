//===- AttentionF32.cpp - Fused f32 attention on Sinter's own kernels -----===//
//
// abi.h's self-attention in f32 (cuDNN's fused attention takes bf16 and
// fp16 only): kernels/AttentionF32Kernels.h's four kernels, which nvcc
// built into a fatbinary that this file carries. The module is loaded at
// the first f32 attention. The forward call writes o and the row
// statistics; the backward call computes each row's dO . o, then dk and dv,
// then dq, each in a fixed order. Over a packed projection the step keeps
// the statistics (or, when it keeps none, they go to the workspace);
// heads-major, the backward call runs the forward pass again into the
// workspace for o and them, as cuDNN's heads-major call does.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "cuda/Driver.h"
#include "cuda/Errors.h"
#include "cuda/kernels/AttentionF32Kernels.h"
#include "runtime/contract/AbiNames.h"

#include <algorithm>
#include <climits>
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

static_assert(abi::cudaAttentionF32Takes(32) && abi::cudaAttentionF32Takes(64) &&
                  !abi::cudaAttentionF32Takes(16) && !abi::cudaAttentionF32Takes(128),
              "the compiler's head sizes are the kernels' (k::headSizeBuilt)");

/// One head size's kernels, resolved at its first call.
struct F32AttentionKernels {
  CUfunction forward = nullptr, delta = nullptr, keys = nullptr, queries = nullptr;
  int forwardShared, keysShared, queriesShared; ///< floats of shared memory
};

namespace {

template <int D> F32AttentionKernels sharedOf() {
  F32AttentionKernels ks;
  ks.forwardShared = k::forwardSharedFloats<D>();
  ks.keysShared = k::keyValueSharedFloats<D>();
  ks.queriesShared = k::querySharedFloats<D>();
  return ks;
}

} // namespace

/// The loaded module and its kernels for head sizes 32 and 64.
struct CudaDevice::AttentionF32 {
  CUmodule module = nullptr;
  F32AttentionKernels bySize[2] = {sharedOf<32>(), sharedOf<64>()};
};

void CudaDevice::AttentionF32Unload::operator()(AttentionF32 *kernels) const {
  if (kernels->module && driver())
    driver()->moduleUnload(kernels->module);
  delete kernels;
}

namespace {

/// `s` named as the call `what` of `shape` made it; built only for a
/// failure (the calls are on the step's hot path).
Status named(Status s, const char *what, const int64_t shape[7]) {
  if (s.ok())
    return s;
  return s.withPrefix(std::string(what) + " [batch " + std::to_string(shape[0]) + ", heads " +
                      std::to_string(shape[1]) + ", t " + std::to_string(shape[2]) + ", d " +
                      std::to_string(shape[4]) + "]: ");
}

/// Up to 227 KiB on sm_90 and 163 on sm_80; more than the default 48 asks.
Status allowShared(CUfunction f, int floats) {
  return check(driver()->funcSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          floats * int(sizeof(float))),
               "cuFuncSetAttribute (shared memory of the f32 attention)");
}

/// Whether the kernels can take the call's shape and the pointers they
/// read and write 16 bytes at a time.
Status checkCall(const int64_t s[7], std::initializer_list<const void *> pointers) {
  if (!k::headSizeBuilt(s[4]) || s[2] != s[3] || s[4] != s[5])
    return Status::error("internal error: the f32 attention kernels take one t and head "
                         "sizes 32 or 64");
  // Pairs are the grid's columns, tiles its rows (at most 65,535).
  if (k::tilesOf(int(std::min<int64_t>(s[2], INT32_MAX))) > 65535 ||
      s[0] * s[1] * s[2] > int64_t(INT32_MAX) * k::kThreads)
    return Status::error("a sequence longer than the kernels' grid takes (4,194,240)");
  for (const void *p : pointers)
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0)
      return Status::error("internal error: an f32 attention buffer is not 16-byte aligned");
  return Status::success();
}

/// The arguments common to both layouts, for abi.h's shape [batch, heads,
/// t, t, d, d, causal].
k::AttentionArgs argsOf(const int64_t s[7]) {
  k::AttentionArgs a{};
  a.heads = int(s[1]);
  a.t = int(s[2]);
  a.causal = int(s[6]);
  a.scale = float(1.0 / std::sqrt(double(s[4])));
  return a;
}

/// q, k, v and o (and their gradients) [batch, heads, t, d], each packed.
k::AttentionArgs headsMajorArgs(const float *q, const float *k, const float *v,
                                const int64_t s[7]) {
  k::AttentionArgs a = argsOf(s);
  const int64_t head = s[2] * s[4];
  a.q = q;
  a.k = k;
  a.v = v;
  a.qkv = a.out = {s[1] * head, head, s[4]};
  return a;
}

/// q, k and v (and their gradients) the three blocks of a row of qkv
/// [batch, t, 3 * heads * d], o (and dO) [batch, t, heads, d].
k::AttentionArgs packedArgs(const float *qkv, const int64_t s[7]) {
  k::AttentionArgs a = argsOf(s);
  const int64_t t = s[2], d = s[4], c = s[1] * d;
  a.q = qkv;
  a.k = qkv + c;
  a.v = qkv + 2 * c;
  a.qkv = {t * 3 * c, d, 3 * c};
  a.out = {t * c, d, c};
  return a;
}

/// A launch of 128 threads a block.
Status launch(void *stream, CUfunction f, int64_t gridX, int64_t gridY, int sharedFloats,
              void **params) {
  return check(driver()->launchKernel(f, unsigned(gridX), unsigned(gridY), 1, k::kThreads, 1,
                                      1, unsigned(sharedFloats * int(sizeof(float))),
                                      static_cast<CUstream>(stream), params, nullptr),
               "cuLaunchKernel");
}

/// o and the statistics (a.o, a.lse) from q, k and v.
Status forward(void *stream, const F32AttentionKernels &ks, k::AttentionArgs a, const int64_t s[7]) {
  void *params[] = {&a};
  return launch(stream, ks.forward, s[0] * s[1], k::tilesOf(a.t), ks.forwardShared, params);
}

/// The gradients from dO, o and the statistics, a.delta a workspace of a
/// float per row.
Status backward(void *stream, const F32AttentionKernels &ks, k::AttentionArgs a, const int64_t s[7]) {
  const int64_t pairs = s[0] * s[1];
  long long rows = pairs * a.t;
  void *params[] = {&a}, *deltaParams[] = {&a, &rows};
  SINTER_RT_RETURN_IF_ERROR(launch(stream, ks.delta, k::deltaBlocks(rows), 1, 0, deltaParams));
  SINTER_RT_RETURN_IF_ERROR(
      launch(stream, ks.keys, pairs, k::tilesOf(a.t), ks.keysShared, params));
  return launch(stream, ks.queries, pairs, k::tilesOf(a.t), ks.queriesShared, params);
}

} // namespace

Expected<const F32AttentionKernels *> CudaDevice::attentionF32Kernels(int64_t headSize) {
  if (!loadedAttentionF32) {
    std::unique_ptr<AttentionF32, AttentionF32Unload> loaded(new AttentionF32());
    SINTER_CUDA_CHECK(driver()->moduleLoadData(&loaded->module, sinterAttentionF32Image));
    loadedAttentionF32 = std::move(loaded);
  }
  F32AttentionKernels &ks = loadedAttentionF32->bySize[headSize == 32 ? 0 : 1];
  if (ks.forward)
    return &ks;
  int allowed = 0;
  SINTER_CUDA_CHECK(
      cudaDeviceGetAttribute(&allowed, cudaDevAttrMaxSharedMemoryPerBlockOptin, index));
  int needed = std::max({ks.forwardShared, ks.keysShared, ks.queriesShared}) * int(sizeof(float));
  if (needed > allowed)
    return Status::error("the f32 attention kernels need " + std::to_string(needed) +
                         " bytes of shared memory a block; this GPU allows " +
                         std::to_string(allowed));
  F32AttentionKernels found = ks;
  auto get = [&](CUfunction &f, const char *name) -> Status {
    std::string full = std::string(name) + "_" + std::to_string(headSize);
    return check(driver()->moduleGetFunction(&f, loadedAttentionF32->module, full.c_str()),
                 "cuModuleGetFunction")
        .withPrefix(full + ": ");
  };
  SINTER_RT_RETURN_IF_ERROR(get(found.forward, "sinter_attention_f32_forward"));
  SINTER_RT_RETURN_IF_ERROR(get(found.delta, "sinter_attention_f32_delta"));
  SINTER_RT_RETURN_IF_ERROR(get(found.keys, "sinter_attention_f32_backward_keys"));
  SINTER_RT_RETURN_IF_ERROR(get(found.queries, "sinter_attention_f32_backward_queries"));
  SINTER_RT_RETURN_IF_ERROR(allowShared(found.forward, found.forwardShared));
  SINTER_RT_RETURN_IF_ERROR(allowShared(found.keys, found.keysShared));
  SINTER_RT_RETURN_IF_ERROR(allowShared(found.queries, found.queriesShared));
  ks = found;
  return &ks;
}

bool CudaDevice::beginAttentionF32(const int64_t shape[7],
                                   std::initializer_list<const void *> vectorAccessed,
                                   uint64_t scratchFloats, const char *what,
                                   const F32AttentionKernels *&kernels, float *&scratch) {
  if (skipsWork())
    return false;
  if (failed(named(checkCall(shape, vectorAccessed), what, shape)))
    return false;
  Expected<const F32AttentionKernels *> loaded = attentionF32Kernels(shape[4]);
  if (failed(named(loaded.status(), what, shape)))
    return false;
  kernels = *loaded;
  scratch = nullptr;
  if (scratchFloats) {
    Expected<void *> space = workspace(scratchFloats * sizeof(float));
    if (failed(named(space.status(), what, shape)))
      return false;
    scratch = static_cast<float *>(*space);
  }
  return true;
}

void CudaDevice::attentionF32(const float *q, const float *k, const float *v, float *o,
                              const int64_t shape[7]) {
  const char *what = "attention f32";
  const F32AttentionKernels *ks;
  float *stats; // not kept: the backward call makes them again
  if (!beginAttentionF32(shape, {q, k, v, o}, uint64_t(shape[0] * shape[1] * shape[2]), what,
                         ks, stats))
    return;
  k::AttentionArgs a = headsMajorArgs(q, k, v, shape);
  a.o = o;
  a.lse = stats;
  failed(named(forward(compute, *ks, a, shape), what, shape));
}

void CudaDevice::attentionF32Backward(const float *q, const float *k, const float *v,
                                      const float *gradO, float *gradQ, float *gradK,
                                      float *gradV, const int64_t shape[7]) {
  // The forward pass again, into the workspace: o, then the statistics and
  // the deltas, a float per row each (o's rows are 16-byte multiples).
  const int64_t rows = shape[0] * shape[1] * shape[2], oFloats = rows * shape[4];
  const char *what = "attention f32 backward";
  const F32AttentionKernels *ks;
  float *o;
  if (!beginAttentionF32(shape, {q, k, v, gradO, gradQ, gradK, gradV},
                         uint64_t(oFloats + 2 * rows), what, ks, o))
    return;
  k::AttentionArgs a = headsMajorArgs(q, k, v, shape);
  a.o = o;
  a.lse = o + oFloats;
  a.delta = a.lse + rows;
  a.gradO = gradO;
  a.gradQ = gradQ;
  a.gradK = gradK;
  a.gradV = gradV;
  Status s = forward(compute, *ks, a, shape);
  if (s.ok())
    s = backward(compute, *ks, a, shape);
  failed(named(s, what, shape));
}

void CudaDevice::attentionPackedF32(const float *qkv, float *o, float *stats,
                                    const int64_t shape[7]) {
  const char *what = "attention f32";
  const F32AttentionKernels *ks;
  float *scratch; // the statistics, when the step keeps none
  if (!beginAttentionF32(shape, {qkv, o}, stats ? 0 : uint64_t(shape[0] * shape[1] * shape[2]),
                         what, ks, scratch))
    return;
  k::AttentionArgs a = packedArgs(qkv, shape);
  a.o = o;
  a.lse = stats ? stats : scratch;
  failed(named(forward(compute, *ks, a, shape), what, shape));
}

void CudaDevice::attentionPackedF32Backward(const float *qkv, const float *o,
                                            const float *stats, const float *gradO,
                                            float *gradQkv, const int64_t shape[7]) {
  const char *what = "attention f32 backward";
  const F32AttentionKernels *ks;
  float *delta;
  if (!beginAttentionF32(shape, {qkv, o, gradO, gradQkv},
                         uint64_t(shape[0] * shape[1] * shape[2]), what, ks, delta))
    return;
  k::AttentionArgs a = packedArgs(qkv, shape);
  const int64_t c = shape[1] * shape[4];
  a.o = const_cast<float *>(o);
  a.lse = const_cast<float *>(stats);
  a.gradO = gradO;
  a.gradQ = gradQkv;
  a.gradK = gradQkv + c;
  a.gradV = gradQkv + 2 * c;
  a.delta = delta;
  failed(named(backward(compute, *ks, a, shape), what, shape));
}

} // namespace sinter::rt::cuda
