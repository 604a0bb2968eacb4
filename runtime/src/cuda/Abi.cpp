//===- Abi.cpp - abi.h's sinter_cuda_* functions ------------------------===//
//
// What a CUDA step calls, handed to the GPU the process opened.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "device/LibrarySite.h"
#include "runtime/contract/abi.h"

#include <cstdio>
#include <cstdlib>

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

} // namespace

extern "C" {

void sinter_cuda_launch(int64_t kernel, int64_t gx, int64_t gy, int64_t gz,
                        int64_t bx, int64_t by, int64_t bz,
                        int64_t shared_bytes, int64_t nargs, void *args) {
  // A kernel's failure names the kernel, not the library call before it.
  sinter::rt::setLibrarySite(-1);
  const int64_t grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  device().launch(kernel, grid, block, shared_bytes, nargs, args);
}

void sinter_cuda_matmul_f32(const float *a, const float *b, float *c,
                            int64_t batch, int64_t m, int64_t n, int64_t k,
                            int64_t flags, const float *bias) {
  device().matmul(a, b, c, batch, m, n, k, flags, bias);
}

void sinter_cuda_matmul_bf16(const uint16_t *a, const uint16_t *b, float *c,
                             int64_t batch, int64_t m, int64_t n, int64_t k,
                             int64_t flags, const float *bias) {
  device().matmul(a, b, c, batch, m, n, k, flags, bias, /*bf16Inputs=*/true);
}

void sinter_cuda_conv2d_f32(const float *x, const float *w, float *y,
                            int64_t n, int64_t c, int64_t h, int64_t wd,
                            int64_t o, int64_t kh, int64_t kw, int64_t oh,
                            int64_t ow, int64_t sh, int64_t sw, int64_t dh,
                            int64_t dw, int64_t ph, int64_t pw) {
  const int64_t shape[15] = {n, c, h, wd, o, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw};
  device().conv2d(ConvolutionPass::Forward, x, w, y, shape);
}

void sinter_cuda_conv2d_backward_data_f32(const float *dy, const float *w, float *dx,
                                          int64_t n, int64_t c, int64_t h, int64_t wd,
                                          int64_t o, int64_t kh, int64_t kw, int64_t oh,
                                          int64_t ow, int64_t sh, int64_t sw, int64_t dh,
                                          int64_t dw, int64_t ph, int64_t pw) {
  const int64_t shape[15] = {n, c, h, wd, o, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw};
  device().conv2d(ConvolutionPass::BackwardData, dy, w, dx, shape);
}

void sinter_cuda_conv2d_backward_weights_f32(const float *x, const float *dy,
                                             float *dwt, int64_t n, int64_t c,
                                             int64_t h, int64_t wd, int64_t o,
                                             int64_t kh, int64_t kw, int64_t oh,
                                             int64_t ow, int64_t sh, int64_t sw,
                                             int64_t dh, int64_t dw, int64_t ph,
                                             int64_t pw) {
  const int64_t shape[15] = {n, c, h, wd, o, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw};
  device().conv2d(ConvolutionPass::BackwardWeights, x, dy, dwt, shape);
}

void sinter_cuda_attention_bf16(const uint16_t *q, const uint16_t *k, const uint16_t *v,
                                uint16_t *o, int64_t batch, int64_t heads, int64_t tq,
                                int64_t tk, int64_t d, int64_t dv, int64_t causal) {
  const int64_t shape[7] = {batch, heads, tq, tk, d, dv, causal};
  device().attention(q, k, v, o, shape);
}

void sinter_cuda_attention_backward_bf16(const uint16_t *q, const uint16_t *k,
                                         const uint16_t *v, const uint16_t *grad_o,
                                         uint16_t *grad_q, uint16_t *grad_k,
                                         uint16_t *grad_v, int64_t batch, int64_t heads,
                                         int64_t tq, int64_t tk, int64_t d, int64_t dv,
                                         int64_t causal) {
  const int64_t shape[7] = {batch, heads, tq, tk, d, dv, causal};
  device().attentionBackward(q, k, v, grad_o, grad_q, grad_k, grad_v, shape);
}

void sinter_cuda_batch_norm_f32(const float *x, const float *weight, const float *bias,
                                float *y, float *mean, float *invstd, int64_t n,
                                int64_t c, int64_t spatial, double epsilon) {
  const int64_t shape[3] = {n, c, spatial};
  device().batchNorm(x, weight, bias, y, mean, invstd, shape, epsilon);
}

void sinter_cuda_batch_norm_backward_f32(const float *x, const float *dy,
                                         const float *weight, const float *mean,
                                         const float *invstd, float *dx, float *dweight,
                                         float *dbias, int64_t n, int64_t c,
                                         int64_t spatial, double epsilon) {
  const int64_t shape[3] = {n, c, spatial};
  device().batchNormBackward(x, dy, weight, mean, invstd, dx, dweight, dbias, shape,
                             epsilon);
}

void sinter_cuda_graph_begin(int64_t region, const int64_t *signature,
                             int64_t count) {
  device().graphBegin(region, signature, count);
}

void sinter_cuda_graph_end(int64_t region) { device().graphEnd(region); }

void sinter_cuda_read(void *dst, const void *src, int64_t offset,
                      int64_t bytes) {
  sinter::rt::setLibrarySite(-1);
  device().read(dst, src, offset, bytes);
}

} // extern "C"
