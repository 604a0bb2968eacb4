//===- Abi.cpp - abi.h's sinter_cuda_* functions ------------------------===//
//
// What a CUDA step calls, handed to the GPU the process opened.
//
//===----------------------------------------------------------------------===//

#include "runtime/contract/abi.h"
#include "cuda/CudaDevice.h"
#include "device/LibrarySite.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace sinter::rt::cuda;

namespace {

CudaDevice &device() {
  CudaDevice *d = activeDevice();
  if (!d) {
    std::fprintf(stderr, "internal error: a CUDA step ran before its GPU was "
                         "opened\n");
    std::abort();
  }
  return *d;
}

/// Queues `call` on the device: recorded for its region's graph when the
/// region records (so it holds its arguments by value), timed as one call
/// of `kind` named by `label()` (and the op it computes) when profiling,
/// and waited for, a failure named so, with SINTER_CUDA_SYNC.
template <typename Label, typename Call>
void queue(const char *kind, Label &&label, Call call) {
  CudaDevice &d = device();
  if (d.recording())
    d.record(call);
  if (d.waitsForEachCall()) {
    call(d);
    return d.waitForCall(label());
  }
  if (!d.profiling())
    return call(d);
  // Named before the clock starts: the host's string work is not the GPU's.
  std::string named = label() + sinter::rt::librarySiteSuffix();
  d.profileBegin();
  call(d);
  d.profileEnd(kind, std::move(named));
}

std::string dims(std::initializer_list<int64_t> extents) {
  std::string out;
  for (int64_t e : extents)
    out += (out.empty() ? "" : " x ") + std::to_string(e);
  return out;
}

std::string matmulLabel(const char *type, int64_t batch, int64_t m, int64_t n,
                        int64_t k) {
  return std::string("matmul ") + type + " " +
         (batch > 1 ? std::to_string(batch) + " x " : "") + "[" + dims({m, k}) + "] @ [" +
         dims({k, n}) + "]";
}

std::string convolutionLabel(const char *pass, const int64_t s[15]) {
  return std::string("conv2d ") + pass + " [" + dims({s[0], s[1], s[2], s[3]}) + "] * [" +
         dims({s[4], s[1], s[5], s[6]}) + "]";
}

std::string attentionLabel(const char *pass, const int64_t s[7]) {
  return std::string("attention ") + pass + " [" + dims({s[0], s[1], s[2], s[4]}) + "]" +
         (s[6] ? " causal" : "");
}

} // namespace

extern "C" {

void sinter_cuda_launch(int64_t kernel, int64_t gx, int64_t gy, int64_t gz, int64_t bx,
                        int64_t by, int64_t bz, int64_t shared_bytes, int64_t nargs,
                        void *args) {
  // A kernel's failure names the kernel, not the library call before it.
  sinter::rt::setLibrarySite(-1);
  const int64_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  CudaDevice &d = device();
  if (!d.recording() && !d.profiling() && !d.waitsForEachCall())
    return d.launch(kernel, grid, block, shared_bytes, nargs, args); // the hot path
  // `args` is the step's one array of slots, reused by the next launch: a
  // recorded launch keeps a copy.
  std::vector<int64_t> slots(static_cast<int64_t *>(args),
                             static_cast<int64_t *>(args) + nargs);
  queue(
      "kernels", [&] { return d.kernelLabel(kernel); },
      [=, slots = std::move(slots)](CudaDevice &dev) mutable {
        dev.launch(kernel, grid, block, shared_bytes, nargs, slots.data());
      });
}

void sinter_cuda_matmul_f32(const float *a, const float *b, float *c, int64_t batch,
                            int64_t m, int64_t n, int64_t k, int64_t flags,
                            const float *bias) {
  queue(
      "matmul", [&] { return matmulLabel("f32", batch, m, n, k); },
      [=](CudaDevice &d) {
        d.matmul(a, b, c, CudaDevice::MatmulShape::dense(batch, m, n, k, flags), bias);
      });
}

void sinter_cuda_matmul_bf16(const uint16_t *a, const uint16_t *b, float *c,
                             int64_t batch, int64_t m, int64_t n, int64_t k,
                             int64_t flags, const float *bias) {
  queue(
      "matmul", [&] { return matmulLabel("bf16", batch, m, n, k); },
      [=](CudaDevice &d) {
        d.matmul(a, b, c, CudaDevice::MatmulShape::dense(batch, m, n, k, flags), bias,
                 CudaDevice::MatmulTypes::bf16Inputs);
      });
}

void sinter_cuda_matmul_bf16_rounded(const uint16_t *a, const uint16_t *b, uint16_t *c,
                                     int64_t batch, int64_t m, int64_t n, int64_t k,
                                     int64_t flags, const uint16_t *bias) {
  queue(
      "matmul", [&] { return matmulLabel("bf16 rounded", batch, m, n, k); },
      [=](CudaDevice &d) {
        d.matmul(a, b, c, CudaDevice::MatmulShape::dense(batch, m, n, k, flags), bias,
                 CudaDevice::MatmulTypes::bf16);
      });
}

void sinter_cuda_matmul_pitched_f32(const float *a, const float *b, float *c, int64_t m,
                                    int64_t n, int64_t k, int64_t flags,
                                    const float *bias, int64_t lda, int64_t ldb,
                                    int64_t ldc) {
  queue(
      "matmul", [&] { return matmulLabel("f32", 1, m, n, k); },
      [=](CudaDevice &d) {
        d.matmul(a, b, c, {1, m, n, k, flags, lda, ldb, ldc}, bias);
      });
}

void sinter_cuda_matmul_pitched_bf16(const uint16_t *a, const uint16_t *b, float *c,
                                     int64_t m, int64_t n, int64_t k, int64_t flags,
                                     const float *bias, int64_t lda, int64_t ldb,
                                     int64_t ldc) {
  queue(
      "matmul", [&] { return matmulLabel("bf16", 1, m, n, k); },
      [=](CudaDevice &d) {
        d.matmul(a, b, c, {1, m, n, k, flags, lda, ldb, ldc}, bias,
                 CudaDevice::MatmulTypes::bf16Inputs);
      });
}

void sinter_cuda_matmul_pitched_bf16_rounded(const uint16_t *a, const uint16_t *b,
                                             uint16_t *c, int64_t m, int64_t n, int64_t k,
                                             int64_t flags, const uint16_t *bias,
                                             int64_t lda, int64_t ldb, int64_t ldc) {
  queue(
      "matmul", [&] { return matmulLabel("bf16 rounded", 1, m, n, k); },
      [=](CudaDevice &d) {
        d.matmul(a, b, c, {1, m, n, k, flags, lda, ldb, ldc}, bias,
                 CudaDevice::MatmulTypes::bf16);
      });
}

void sinter_cuda_conv2d_f32(const float *x, const float *w, float *y, int64_t n,
                            int64_t c, int64_t h, int64_t wd, int64_t o, int64_t kh,
                            int64_t kw, int64_t oh, int64_t ow, int64_t sh, int64_t sw,
                            int64_t dh, int64_t dw, int64_t ph, int64_t pw) {
  const int64_t shape[15] = {n, c, h, wd, o, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw};
  queue(
      "conv2d", [&] { return convolutionLabel("forward", shape); },
      [=](CudaDevice &d) { d.conv2d(ConvolutionPass::Forward, x, w, y, shape); });
}

void sinter_cuda_conv2d_backward_data_f32(const float *dy, const float *w, float *dx,
                                          int64_t n, int64_t c, int64_t h, int64_t wd,
                                          int64_t o, int64_t kh, int64_t kw, int64_t oh,
                                          int64_t ow, int64_t sh, int64_t sw, int64_t dh,
                                          int64_t dw, int64_t ph, int64_t pw) {
  const int64_t shape[15] = {n, c, h, wd, o, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw};
  queue(
      "conv2d", [&] { return convolutionLabel("backward_data", shape); },
      [=](CudaDevice &d) { d.conv2d(ConvolutionPass::BackwardData, dy, w, dx, shape); });
}

void sinter_cuda_conv2d_backward_weights_f32(const float *x, const float *dy, float *dwt,
                                             int64_t n, int64_t c, int64_t h, int64_t wd,
                                             int64_t o, int64_t kh, int64_t kw,
                                             int64_t oh, int64_t ow, int64_t sh,
                                             int64_t sw, int64_t dh, int64_t dw,
                                             int64_t ph, int64_t pw) {
  const int64_t shape[15] = {n, c, h, wd, o, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw};
  queue(
      "conv2d", [&] { return convolutionLabel("backward_weights", shape); },
      [=](CudaDevice &d) {
        d.conv2d(ConvolutionPass::BackwardWeights, x, dy, dwt, shape);
      });
}

void sinter_cuda_attention_bf16(const uint16_t *q, const uint16_t *k, const uint16_t *v,
                                uint16_t *o, int64_t batch, int64_t heads, int64_t tq,
                                int64_t tk, int64_t d, int64_t dv, int64_t causal) {
  const int64_t shape[7] = {batch, heads, tq, tk, d, dv, causal};
  queue(
      "attention", [&] { return attentionLabel("forward", shape); },
      [=](CudaDevice &d) { d.attention(q, k, v, o, shape); });
}

void sinter_cuda_attention_backward_bf16(const uint16_t *q, const uint16_t *k,
                                         const uint16_t *v, const uint16_t *grad_o,
                                         uint16_t *grad_q, uint16_t *grad_k,
                                         uint16_t *grad_v, int64_t batch, int64_t heads,
                                         int64_t tq, int64_t tk, int64_t d, int64_t dv,
                                         int64_t causal) {
  const int64_t shape[7] = {batch, heads, tq, tk, d, dv, causal};
  queue(
      "attention", [&] { return attentionLabel("backward", shape); },
      [=](CudaDevice &d) {
        d.attentionBackward(q, k, v, grad_o, grad_q, grad_k, grad_v, shape);
      });
}

void sinter_cuda_attention_qkv_bf16(const uint16_t *qkv, uint16_t *o, float *stats,
                                    int64_t batch, int64_t t, int64_t heads, int64_t d,
                                    int64_t causal) {
  const int64_t shape[7] = {batch, heads, t, t, d, d, causal};
  queue(
      "attention", [&] { return attentionLabel("forward", shape); },
      [=](CudaDevice &device) { device.attentionPacked(qkv, o, stats, shape); });
}

void sinter_cuda_attention_qkv_backward_bf16(const uint16_t *qkv, const uint16_t *o,
                                             const float *stats, const uint16_t *grad_o,
                                             uint16_t *grad_qkv, int64_t batch, int64_t t,
                                             int64_t heads, int64_t d, int64_t causal) {
  const int64_t shape[7] = {batch, heads, t, t, d, d, causal};
  queue(
      "attention", [&] { return attentionLabel("backward", shape); },
      [=](CudaDevice &device) {
        device.attentionPackedBackward(qkv, o, stats, grad_o, grad_qkv, shape);
      });
}

void sinter_cuda_attention_f32(const float *q, const float *k, const float *v, float *o,
                               int64_t batch, int64_t heads, int64_t tq, int64_t tk,
                               int64_t d, int64_t dv, int64_t causal) {
  const int64_t shape[7] = {batch, heads, tq, tk, d, dv, causal};
  queue(
      "attention", [&] { return attentionLabel("f32 forward", shape); },
      [=](CudaDevice &device) { device.attentionF32(q, k, v, o, shape); });
}

void sinter_cuda_attention_backward_f32(const float *q, const float *k, const float *v,
                                        const float *grad_o, float *grad_q, float *grad_k,
                                        float *grad_v, int64_t batch, int64_t heads,
                                        int64_t tq, int64_t tk, int64_t d, int64_t dv,
                                        int64_t causal) {
  const int64_t shape[7] = {batch, heads, tq, tk, d, dv, causal};
  queue(
      "attention", [&] { return attentionLabel("f32 backward", shape); },
      [=](CudaDevice &device) {
        device.attentionF32Backward(q, k, v, grad_o, grad_q, grad_k, grad_v, shape);
      });
}

void sinter_cuda_attention_qkv_f32(const float *qkv, float *o, float *stats, int64_t batch,
                                   int64_t t, int64_t heads, int64_t d, int64_t causal) {
  const int64_t shape[7] = {batch, heads, t, t, d, d, causal};
  queue(
      "attention", [&] { return attentionLabel("f32 forward", shape); },
      [=](CudaDevice &device) { device.attentionPackedF32(qkv, o, stats, shape); });
}

void sinter_cuda_attention_qkv_backward_f32(const float *qkv, const float *o,
                                            const float *stats, const float *grad_o,
                                            float *grad_qkv, int64_t batch, int64_t t,
                                            int64_t heads, int64_t d, int64_t causal) {
  const int64_t shape[7] = {batch, heads, t, t, d, d, causal};
  queue(
      "attention", [&] { return attentionLabel("f32 backward", shape); },
      [=](CudaDevice &device) {
        device.attentionPackedF32Backward(qkv, o, stats, grad_o, grad_qkv, shape);
      });
}

void sinter_cuda_batch_norm_f32(const float *x, const float *weight, const float *bias,
                                float *y, float *mean, float *invstd, int64_t n,
                                int64_t c, int64_t spatial, double epsilon) {
  const int64_t shape[3] = {n, c, spatial};
  queue(
      "batch_norm",
      [&] {
        return "batch_norm forward [" + dims({n, c, spatial}) + "]";
      },
      [=](CudaDevice &d) {
        d.batchNorm(x, weight, bias, y, mean, invstd, shape, epsilon);
      });
}

void sinter_cuda_batch_norm_backward_f32(const float *x, const float *dy,
                                         const float *weight, const float *mean,
                                         const float *invstd, float *dx, float *dweight,
                                         float *dbias, int64_t n, int64_t c,
                                         int64_t spatial, double epsilon) {
  const int64_t shape[3] = {n, c, spatial};
  queue(
      "batch_norm",
      [&] {
        return "batch_norm backward [" + dims({n, c, spatial}) + "]";
      },
      [=](CudaDevice &d) {
        d.batchNormBackward(x, dy, weight, mean, invstd, dx, dweight, dbias, shape,
                            epsilon);
      });
}

void sinter_cuda_graph_begin(int64_t region, const int64_t *signature, int64_t count) {
  device().graphBegin(region, signature, count);
}

void sinter_cuda_graph_end(int64_t region) { device().graphEnd(region); }

void sinter_cuda_read(void *dst, const void *src, int64_t offset, int64_t bytes) {
  sinter::rt::setLibrarySite(-1);
  device().read(dst, src, offset, bytes);
}

} // extern "C"
