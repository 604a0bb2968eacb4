//===- BatchNorm.cpp - Training batch-norm through cuDNN ------------------===//
//
// abi.h's batch-norm, f32: y = (x - mean) * invstd * weight + bias per
// channel of x [n, c, spatial], with the batch's mean and invstd =
// 1 / sqrt(var + eps) (biased variance), and its gradients. cuDNN's spatial
// batch-norm (not the persistent one, whose sums use atomics): a step
// repeated on the same inputs gives the same bits. Each shape's two
// descriptors are made once and kept.
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "cuda/Errors.h"
#include "cuda/LibraryPlans.h"

namespace sinter::rt::cuda {

Expected<CudaDevice::BatchNorm *> CudaDevice::batchNormPlan(const int64_t s[3]) {
  std::vector<int64_t> key(s, s + 3);
  if (auto it = batchNorms.find(key); it != batchNorms.end())
    return it->second.get();
  SINTER_RT_RETURN_IF_ERROR(openDnn());
  auto plan = std::make_unique<BatchNorm>();
  // x as [n, c, spatial, 1]: the statistics are over n and spatial.
  SINTER_CUDA_CHECK(cudnnCreateTensorDescriptor(&plan->data));
  SINTER_CUDA_CHECK(cudnnSetTensor4dDescriptor(plan->data, CUDNN_TENSOR_NCHW,
                                               CUDNN_DATA_FLOAT, int(s[0]), int(s[1]),
                                               int(s[2]), 1));
  SINTER_CUDA_CHECK(cudnnCreateTensorDescriptor(&plan->channels));
  SINTER_CUDA_CHECK(
      cudnnDeriveBNTensorDescriptor(plan->channels, plan->data, CUDNN_BATCHNORM_SPATIAL));
  BatchNorm *made = plan.get();
  batchNorms[key] = std::move(plan);
  return made;
}

void CudaDevice::batchNorm(const float *x, const float *weight, const float *bias,
                           float *y, float *mean, float *invstd, const int64_t shape[3],
                           double epsilon) {
  if (skipsWork())
    return;
  Expected<BatchNorm *> made = batchNormPlan(shape);
  if (failed(made.status().withPrefix("batch_norm: ")))
    return;
  const BatchNorm &plan = **made;
  const float one = 1.0f, zero = 0.0f;
  // No running statistics here: the step updates them from mean and the
  // variance, as the model says.
  failed(check(cudnnBatchNormalizationForwardTraining(
                   dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, plan.data, x, plan.data, y,
                   plan.channels, weight, bias, /*exponentialAverageFactor=*/0.0,
                   /*resultRunningMean=*/nullptr, /*resultRunningVariance=*/nullptr,
                   epsilon, mean, invstd),
               "cudnnBatchNormalizationForwardTraining")
             .withPrefix("batch_norm: "));
}

void CudaDevice::batchNormBackward(const float *x, const float *dy, const float *weight,
                                   const float *mean, const float *invstd, float *dx,
                                   float *dweight, float *dbias, const int64_t shape[3],
                                   double epsilon) {
  if (skipsWork())
    return;
  Expected<BatchNorm *> made = batchNormPlan(shape);
  if (failed(made.status().withPrefix("batch_norm_backward: ")))
    return;
  const BatchNorm &plan = **made;
  const float one = 1.0f, zero = 0.0f;
  failed(check(cudnnBatchNormalizationBackward(dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero,
                                               &one, &zero, plan.data, x, plan.data, dy,
                                               plan.data, dx, plan.channels, weight,
                                               dweight, dbias, epsilon, mean, invstd),
               "cudnnBatchNormalizationBackward")
             .withPrefix("batch_norm_backward: "));
}

} // namespace sinter::rt::cuda
