//===- Convolution.cpp - f32 convolutions and their gradients through cuDNN ===//
//
// abi.h's conv2d: y[n, o, oh, ow] = x[n, c, h, w] * w[o, c, kh, kw], NCHW,
// with zero padding, and its two gradients: of x (cuDNN's backward data) and
// of w (backward filter). Each shape's descriptors are made once and kept,
// with an algorithm per pass chosen the first time that pass runs: cuDNN's
// heuristic, restricted to FMA math (f32, not TF32) and to deterministic
// algorithms, so a step repeated on the same inputs gives the same bits
// (with precision.deterministic false, any algorithm: its first choice).
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "cuda/Errors.h"
#include "cuda/LibraryPlans.h"

namespace sinter::rt::cuda {

namespace {

const char *passName(ConvolutionPass pass) {
  switch (pass) {
  case ConvolutionPass::Forward:
    return "conv2d";
  case ConvolutionPass::BackwardData:
    return "conv2d_backward_data";
  case ConvolutionPass::BackwardWeights:
    return "conv2d_backward_weights";
  }
  return "conv2d";
}

/// The first of cuDNN's ranked candidates that runs in f32 FMA math and,
/// unless `anyOrder`, is deterministic; false when there is none.
template <typename Perf>
bool pickAlgorithm(const Perf *found, int count, bool anyOrder, ConvolutionAlgorithm &out) {
  for (int i = 0; i < count; ++i)
    if (found[i].status == CUDNN_STATUS_SUCCESS && found[i].mathType == CUDNN_FMA_MATH &&
        (anyOrder || found[i].determinism == CUDNN_DETERMINISTIC)) {
      out.algo = int(found[i].algo);
      out.workspaceBytes = found[i].memory;
      out.chosen = true;
      return true;
    }
  return false;
}

} // namespace

Status CudaDevice::openDnn() {
  if (dnn)
    return Status::success();
  SINTER_CUDA_CHECK(cudnnCreate(&dnn));
  SINTER_CUDA_CHECK(cudnnSetStream(dnn, compute));
  return Status::success();
}

Expected<CudaDevice::Convolution *> CudaDevice::convolutionPlan(const int64_t s[15]) {
  std::vector<int64_t> key(s, s + 15);
  if (auto it = convolutions.find(key); it != convolutions.end())
    return it->second.get();
  SINTER_RT_RETURN_IF_ERROR(openDnn());
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
  Convolution *made = plan.get();
  convolutions[key] = std::move(plan);
  return made;
}

Status CudaDevice::chooseAlgorithm(Convolution &plan, ConvolutionPass pass) {
  ConvolutionAlgorithm &out = plan.algorithms[int(pass)];
  if (out.chosen)
    return Status::success();
  int count = 0;
  bool found = false;
  switch (pass) {
  case ConvolutionPass::Forward: {
    cudnnConvolutionFwdAlgoPerf_t ranked[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    SINTER_CUDA_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
        dnn, plan.input, plan.filter, plan.conv, plan.output,
        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, ranked));
    found = pickAlgorithm(ranked, count, nondeterministic, out);
    break;
  }
  case ConvolutionPass::BackwardData: {
    cudnnConvolutionBwdDataAlgoPerf_t ranked[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    SINTER_CUDA_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
        dnn, plan.filter, plan.output, plan.conv, plan.input,
        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, ranked));
    found = pickAlgorithm(ranked, count, nondeterministic, out);
    break;
  }
  case ConvolutionPass::BackwardWeights: {
    cudnnConvolutionBwdFilterAlgoPerf_t ranked[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    SINTER_CUDA_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
        dnn, plan.input, plan.output, plan.conv, plan.filter,
        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, ranked));
    found = pickAlgorithm(ranked, count, nondeterministic, out);
    break;
  }
  }
  if (!found)
    return Status::error(nondeterministic
                             ? "cuDNN has no f32 algorithm for this convolution"
                             : "cuDNN has no deterministic f32 algorithm for this "
                               "convolution");
  return Status::success();
}

void CudaDevice::conv2d(ConvolutionPass pass, const float *first, const float *second,
                        float *result, const int64_t shape[15]) {
  if (skipsWork())
    return;
  std::string prefix = std::string(passName(pass)) + ": ";
  Expected<Convolution *> made = convolutionPlan(shape);
  if (failed(made.status().withPrefix(prefix)))
    return;
  Convolution &plan = **made;
  if (failed(chooseAlgorithm(plan, pass).withPrefix(prefix)))
    return;
  const ConvolutionAlgorithm &chosen = plan.algorithms[int(pass)];
  Expected<void *> work = workspace(chosen.workspaceBytes);
  if (failed(work.status()))
    return;
  const float one = 1.0f, zero = 0.0f;
  Status called;
  switch (pass) {
  case ConvolutionPass::Forward: // first = x, second = w, result = y
    called = check(
        cudnnConvolutionForward(dnn, &one, plan.input, first, plan.filter, second,
                                plan.conv, cudnnConvolutionFwdAlgo_t(chosen.algo), *work,
                                chosen.workspaceBytes, &zero, plan.output, result),
        "cudnnConvolutionForward");
    break;
  case ConvolutionPass::BackwardData: // first = dy, second = w, result = dx
    called = check(cudnnConvolutionBackwardData(
                       dnn, &one, plan.filter, second, plan.output, first, plan.conv,
                       cudnnConvolutionBwdDataAlgo_t(chosen.algo), *work,
                       chosen.workspaceBytes, &zero, plan.input, result),
                   "cudnnConvolutionBackwardData");
    break;
  case ConvolutionPass::BackwardWeights: // first = x, second = dy, result = dw
    called = check(cudnnConvolutionBackwardFilter(
                       dnn, &one, plan.input, first, plan.output, second, plan.conv,
                       cudnnConvolutionBwdFilterAlgo_t(chosen.algo), *work,
                       chosen.workspaceBytes, &zero, plan.filter, result),
                   "cudnnConvolutionBackwardFilter");
    break;
  }
  failed(called.withPrefix(prefix));
}

} // namespace sinter::rt::cuda
