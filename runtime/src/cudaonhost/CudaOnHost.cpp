//===- CudaOnHost.cpp - abi.h's sinter_cuda_* calls, on the CPU ----------===//
//
// A step compiled for CUDA with `sinterc --cuda-on-host` runs its kernels
// as host loops and calls the device's libraries as a GPU step does. This
// library answers those calls on host memory, and opens the CPU as the
// step's device: the CUDA target's own code (its fusions, layouts, strides,
// pitched rows and library calls) then trains on a machine without a GPU,
// where its results can be checked against the CPU target's. What it does
// not check is the GPU's side: the kernels' PTX, cuBLASLt's and cuDNN's
// descriptors.
//
// Matmuls and convolutions go to the CPU's calls (a pitched operand copied
// to dense rows and back); batch-norm and attention are written out here.
//
//===----------------------------------------------------------------------===//

#include "cudaonhost/AttentionOnHost.h"
#include "device/Cuda.h"

#include "runtime/contract/abi.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace sinter::rt {

/// The CPU itself: a step compiled with --cuda-on-host keeps its buffers
/// in host memory.
Expected<Device *> openCudaDevice(int) { return &hostDevice(); }

} // namespace sinter::rt

using namespace sinter::rt::cudaonhost;

namespace {

/// abi.h's matmul flags: b stored [n, k]; a stored [k, m]; the product
/// added to c.
constexpr int64_t kTransposedB = 2, kTransposedA = 4, kAccumulate = 8;

/// `rows` rows of `width` elements of `size` bytes, `pitch` elements apart
/// in `from`, copied to or from a dense buffer.
std::vector<char> dense(const void *from, int64_t rows, int64_t width, int64_t pitch,
                        size_t size) {
  std::vector<char> out(size_t(rows * width) * size);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(&out[size_t(r * width) * size],
                static_cast<const char *>(from) + size_t(r * pitch) * size,
                size_t(width) * size);
  return out;
}

void pitched(const std::vector<char> &from, void *to, int64_t rows, int64_t width,
             int64_t pitch, size_t size) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(static_cast<char *>(to) + size_t(r * pitch) * size,
                &from[size_t(r * width) * size], size_t(width) * size);
}

/// A pitched matmul as the dense one `call` makes: a, b and c (when it is
/// added to) copied to dense rows, the product copied back into c's.
template <typename In, typename Out, typename Bias, typename Call>
void pitchedMatmul(const In *a, const In *b, Out *c, int64_t m, int64_t n, int64_t k,
                   int64_t flags, const Bias *bias, int64_t lda, int64_t ldb, int64_t ldc,
                   Call call) {
  const bool ta = flags & kTransposedA, tb = flags & kTransposedB;
  std::vector<char> da = dense(a, ta ? k : m, ta ? m : k, lda, sizeof(In));
  std::vector<char> db = dense(b, tb ? n : k, tb ? k : n, ldb, sizeof(In));
  std::vector<char> dc = (flags & kAccumulate) ? dense(c, m, n, ldc, sizeof(Out))
                                               : std::vector<char>(size_t(m * n) * sizeof(Out));
  call(reinterpret_cast<const In *>(da.data()), reinterpret_cast<const In *>(db.data()),
       reinterpret_cast<Out *>(dc.data()), int64_t(1), m, n, k, flags, bias);
  pitched(dc, c, m, n, ldc, sizeof(Out));
}

/// The channel-wise sums of `x` [n, c, spatial] (or of x * y), in f64.
std::vector<double> channelSums(const float *x, const float *y, int64_t n, int64_t c,
                                int64_t spatial) {
  std::vector<double> sums(size_t(c), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t at = (i * c + ch) * spatial;
      for (int64_t s = 0; s < spatial; ++s)
        sums[size_t(ch)] += double(x[at + s]) * (y ? double(y[at + s]) : 1.0);
    }
  return sums;
}

/// The packed calls: q, k and v side by side in each row of one
/// projection (and their gradients in each row of its gradient).
template <typename T>
void packedForward(const T *qkv, T *o, float *stats, int64_t batch, int64_t t, int64_t heads,
                   int64_t d, int64_t causal) {
  const int64_t width = heads * d;
  attentionForward(packedAttention(batch, t, heads, d, causal), qkv, qkv + width,
                   qkv + 2 * width, o, stats);
}

template <typename T>
void packedBackward(const T *qkv, const T *o, const float *stats, const T *gradO, T *gradQkv,
                    int64_t batch, int64_t t, int64_t heads, int64_t d, int64_t causal) {
  const int64_t width = heads * d;
  attentionBackward(packedAttention(batch, t, heads, d, causal), qkv, qkv + width,
                    qkv + 2 * width, o, stats, gradO, gradQkv, gradQkv + width,
                    gradQkv + 2 * width);
}

} // namespace

extern "C" {

void sinter_cuda_matmul_f32(const float *a, const float *b, float *c, int64_t batch,
                            int64_t m, int64_t n, int64_t k, int64_t flags,
                            const float *bias) {
  sinter_cpu_matmul_f32(a, b, c, batch, m, n, k, flags, bias);
}

void sinter_cuda_matmul_bf16(const uint16_t *a, const uint16_t *b, float *c,
                             int64_t batch, int64_t m, int64_t n, int64_t k,
                             int64_t flags, const float *bias) {
  sinter_cpu_matmul_bf16(a, b, c, batch, m, n, k, flags, bias);
}

void sinter_cuda_matmul_bf16_rounded(const uint16_t *a, const uint16_t *b, uint16_t *c,
                                     int64_t batch, int64_t m, int64_t n, int64_t k,
                                     int64_t flags, const uint16_t *bias) {
  sinter_cpu_matmul_bf16_rounded(a, b, c, batch, m, n, k, flags, bias);
}

void sinter_cuda_matmul_pitched_f32(const float *a, const float *b, float *c, int64_t m,
                                    int64_t n, int64_t k, int64_t flags,
                                    const float *bias, int64_t lda, int64_t ldb,
                                    int64_t ldc) {
  pitchedMatmul(a, b, c, m, n, k, flags, bias, lda, ldb, ldc, sinter_cpu_matmul_f32);
}

void sinter_cuda_matmul_pitched_bf16(const uint16_t *a, const uint16_t *b, float *c,
                                     int64_t m, int64_t n, int64_t k, int64_t flags,
                                     const float *bias, int64_t lda, int64_t ldb,
                                     int64_t ldc) {
  pitchedMatmul(a, b, c, m, n, k, flags, bias, lda, ldb, ldc, sinter_cpu_matmul_bf16);
}

void sinter_cuda_matmul_pitched_bf16_rounded(const uint16_t *a, const uint16_t *b,
                                             uint16_t *c, int64_t m, int64_t n, int64_t k,
                                             int64_t flags, const uint16_t *bias,
                                             int64_t lda, int64_t ldb, int64_t ldc) {
  pitchedMatmul(a, b, c, m, n, k, flags, bias, lda, ldb, ldc,
                sinter_cpu_matmul_bf16_rounded);
}

void sinter_cuda_conv2d_f32(const float *x, const float *w, float *y, int64_t n, int64_t c,
                            int64_t h, int64_t wd, int64_t o, int64_t kh, int64_t kw,
                            int64_t oh, int64_t ow, int64_t sh, int64_t sw, int64_t dh,
                            int64_t dw, int64_t ph, int64_t pw) {
  sinter_cpu_conv2d_f32(x, w, y, n, c, h, wd, o, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw);
}

void sinter_cuda_conv2d_backward_data_f32(const float *dy, const float *w, float *dx,
                                          int64_t n, int64_t c, int64_t h, int64_t wd,
                                          int64_t o, int64_t kh, int64_t kw, int64_t oh,
                                          int64_t ow, int64_t sh, int64_t sw, int64_t dh,
                                          int64_t dw, int64_t ph, int64_t pw) {
  sinter_cpu_conv2d_backward_data_f32(dy, w, dx, n, c, h, wd, o, kh, kw, oh, ow, sh, sw, dh,
                                      dw, ph, pw);
}

void sinter_cuda_conv2d_backward_weights_f32(const float *x, const float *dy, float *dwt,
                                             int64_t n, int64_t c, int64_t h, int64_t wd,
                                             int64_t o, int64_t kh, int64_t kw,
                                             int64_t oh, int64_t ow, int64_t sh,
                                             int64_t sw, int64_t dh, int64_t dw,
                                             int64_t ph, int64_t pw) {
  sinter_cpu_conv2d_backward_weights_f32(x, dy, dwt, n, c, h, wd, o, kh, kw, oh, ow, sh, sw,
                                         dh, dw, ph, pw);
}

void sinter_cuda_batch_norm_f32(const float *x, const float *weight, const float *bias,
                                float *y, float *mean, float *invstd, int64_t n, int64_t c,
                                int64_t spatial, double epsilon) {
  const double count = double(n * spatial);
  std::vector<double> sums = channelSums(x, nullptr, n, c, spatial);
  std::vector<double> squares(size_t(c), 0.0);
  for (int64_t ch = 0; ch < c; ++ch)
    mean[ch] = float(sums[size_t(ch)] / count);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < spatial; ++s) {
        const double centred = double(x[(i * c + ch) * spatial + s]) - sums[size_t(ch)] / count;
        squares[size_t(ch)] += centred * centred;
      }
  for (int64_t ch = 0; ch < c; ++ch)
    invstd[ch] = float(1.0 / std::sqrt(squares[size_t(ch)] / count + epsilon));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t at = (i * c + ch) * spatial + s;
        y[at] = (x[at] - mean[ch]) * invstd[ch] * weight[ch] + bias[ch];
      }
}

void sinter_cuda_batch_norm_backward_f32(const float *x, const float *dy,
                                         const float *weight, const float *mean,
                                         const float *invstd, float *dx, float *dweight,
                                         float *dbias, int64_t n, int64_t c,
                                         int64_t spatial, double) {
  const double count = double(n * spatial);
  std::vector<float> normalized(size_t(n * c * spatial));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t at = (i * c + ch) * spatial + s;
        normalized[size_t(at)] = (x[at] - mean[ch]) * invstd[ch];
      }
  std::vector<double> sumDy = channelSums(dy, nullptr, n, c, spatial);
  std::vector<double> sumDyX = channelSums(dy, normalized.data(), n, c, spatial);
  for (int64_t ch = 0; ch < c; ++ch) {
    dbias[ch] = float(sumDy[size_t(ch)]);
    dweight[ch] = float(sumDyX[size_t(ch)]);
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < spatial; ++s) {
        const int64_t at = (i * c + ch) * spatial + s;
        dx[at] = float(double(weight[ch]) * invstd[ch] *
                       (dy[at] - sumDy[size_t(ch)] / count -
                        normalized[size_t(at)] * sumDyX[size_t(ch)] / count));
      }
}

void sinter_cuda_attention_bf16(const uint16_t *q, const uint16_t *k, const uint16_t *v,
                                uint16_t *o, int64_t batch, int64_t heads, int64_t tq,
                                int64_t tk, int64_t d, int64_t dv, int64_t causal) {
  attentionForward(headsMajorAttention(batch, heads, tq, tk, d, dv, causal), q, k, v, o,
                   nullptr);
}

void sinter_cuda_attention_backward_bf16(const uint16_t *q, const uint16_t *k,
                                         const uint16_t *v, const uint16_t *grad_o,
                                         uint16_t *grad_q, uint16_t *grad_k, uint16_t *grad_v,
                                         int64_t batch, int64_t heads, int64_t tq, int64_t tk,
                                         int64_t d, int64_t dv, int64_t causal) {
  attentionBackward<uint16_t>(headsMajorAttention(batch, heads, tq, tk, d, dv, causal), q, k,
                              v, nullptr, nullptr, grad_o, grad_q, grad_k, grad_v);
}

void sinter_cuda_attention_qkv_bf16(const uint16_t *qkv, uint16_t *o, float *stats,
                                    int64_t batch, int64_t t, int64_t heads, int64_t d,
                                    int64_t causal) {
  packedForward(qkv, o, stats, batch, t, heads, d, causal);
}

void sinter_cuda_attention_qkv_backward_bf16(const uint16_t *qkv, const uint16_t *o,
                                             const float *stats, const uint16_t *grad_o,
                                             uint16_t *grad_qkv, int64_t batch, int64_t t,
                                             int64_t heads, int64_t d, int64_t causal) {
  packedBackward(qkv, o, stats, grad_o, grad_qkv, batch, t, heads, d, causal);
}

void sinter_cuda_attention_f32(const float *q, const float *k, const float *v, float *o,
                               int64_t batch, int64_t heads, int64_t tq, int64_t tk, int64_t d,
                               int64_t dv, int64_t causal) {
  attentionForward(headsMajorAttention(batch, heads, tq, tk, d, dv, causal), q, k, v, o,
                   nullptr);
}

void sinter_cuda_attention_backward_f32(const float *q, const float *k, const float *v,
                                        const float *grad_o, float *grad_q, float *grad_k,
                                        float *grad_v, int64_t batch, int64_t heads,
                                        int64_t tq, int64_t tk, int64_t d, int64_t dv,
                                        int64_t causal) {
  attentionBackward<float>(headsMajorAttention(batch, heads, tq, tk, d, dv, causal), q, k, v,
                           nullptr, nullptr, grad_o, grad_q, grad_k, grad_v);
}

void sinter_cuda_attention_qkv_f32(const float *qkv, float *o, float *stats, int64_t batch,
                                   int64_t t, int64_t heads, int64_t d, int64_t causal) {
  packedForward(qkv, o, stats, batch, t, heads, d, causal);
}

void sinter_cuda_attention_qkv_backward_f32(const float *qkv, const float *o,
                                            const float *stats, const float *grad_o,
                                            float *grad_qkv, int64_t batch, int64_t t,
                                            int64_t heads, int64_t d, int64_t causal) {
  packedBackward(qkv, o, stats, grad_o, grad_qkv, batch, t, heads, d, causal);
}

} // extern "C"
