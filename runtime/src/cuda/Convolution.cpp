//===- Convolution.cpp - f32 convolutions through cuDNN -----------------===//
//
// abi.h's conv2d: y[n, o, oh, ow] = x[n, c, h, w] * w[o, c, kh, kw], NCHW,
// with zero padding. Each shape's descriptors and algorithm (cuDNN's
// heuristic, restricted to FMA math: f32, not TF32) are made once and kept.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "cuda/Errors.h"
#include "cuda/LibraryPlans.h"

namespace sinter::rt::cuda {

Expected<CudaDevice::Convolution *> CudaDevice::convolutionPlan(const int64_t s[15]) {
  std::vector<int64_t> key(s, s + 15);
  if (auto it = convolutions.find(key); it != convolutions.end())
    return it->second.get();
  if (!dnn) {
    SINTER_CUDA_CHECK(cudnnCreate(&dnn));
    SINTER_CUDA_CHECK(cudnnSetStream(dnn, compute));
  }
  int n = int(s[0]), c = int(s[1]), h = int(s[2]), w = int(s[3]), o = int(s[4]),
      kh = int(s[5]), kw = int(s[6]), oh = int(s[7]), ow = int(s[8]);
  auto plan = std::make_unique<Convolution>();
  SINTER_CUDA_CHECK(cudnnCreateTensorDescriptor(&plan->input));
  SINTER_CUDA_CHECK(cudnnSetTensor4dDescriptor(plan->input, CUDNN_TENSOR_NCHW,
                                               CUDNN_DATA_FLOAT, n, c, h, w));
  SINTER_CUDA_CHECK(cudnnCreateTensorDescriptor(&plan->output));
  SINTER_CUDA_CHECK(cudnnSetTensor4dDescriptor(plan->output, CUDNN_TENSOR_NCHW,
                                               CUDNN_DATA_FLOAT, n, o, oh, ow));
  SINTER_CUDA_CHECK(cudnnCreateFilterDescriptor(&plan->filter));
  SINTER_CUDA_CHECK(cudnnSetFilter4dDescriptor(plan->filter, CUDNN_DATA_FLOAT,
                                               CUDNN_TENSOR_NCHW, o, c, kh, kw));
  SINTER_CUDA_CHECK(cudnnCreateConvolutionDescriptor(&plan->conv));
  SINTER_CUDA_CHECK(cudnnSetConvolution2dDescriptor(
      plan->conv, int(s[13]), int(s[14]), int(s[9]), int(s[10]), int(s[11]), int(s[12]),
      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  SINTER_CUDA_CHECK(cudnnSetConvolutionMathType(plan->conv, CUDNN_FMA_MATH));
  int count = 0;
  cudnnConvolutionFwdAlgoPerf_t found[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  SINTER_CUDA_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
      dnn, plan->input, plan->filter, plan->conv, plan->output,
      CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, found));
  bool chosen = false;
  for (int i = 0; i < count && !chosen; ++i)
    if (found[i].status == CUDNN_STATUS_SUCCESS && found[i].mathType == CUDNN_FMA_MATH) {
      plan->algo = found[i].algo;
      plan->workspaceBytes = found[i].memory;
      chosen = true;
    }
  if (!chosen)
    return Status::error("cuDNN has no f32 algorithm for this convolution");
  Convolution *made = plan.get();
  convolutions[key] = std::move(plan);
  return made;
}

void CudaDevice::conv2d(const float *x, const float *w, float *y,
                        const int64_t shape[15]) {
  if (!firstError.ok())
    return;
  Expected<Convolution *> plan = convolutionPlan(shape);
  if (failed(plan.status().withPrefix("conv2d: ")))
    return;
  Expected<void *> work = workspace((*plan)->workspaceBytes);
  if (failed(work.status()))
    return;
  const float one = 1.0f, zero = 0.0f;
  failed(
      check(cudnnConvolutionForward(dnn, &one, (*plan)->input, x, (*plan)->filter, w,
                                    (*plan)->conv, (*plan)->algo, *work,
                                    (*plan)->workspaceBytes, &zero, (*plan)->output, y),
            "cudnnConvolutionForward")
          .withPrefix("conv2d: "));
}

} // namespace sinter::rt::cuda
