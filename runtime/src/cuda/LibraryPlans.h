//===- LibraryPlans.h - cuBLASLt and cuDNN descriptors kept per shape -*- C++ -*-===//
//
// Private to the CUDA device: what a library call's shape needs made once
// (descriptors, the chosen algorithm, its workspace), freed with the device.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_CUDA_LIBRARYPLANS_H
#define SINTER_RT_CUDA_LIBRARYPLANS_H

#include "cuda/CudaDevice.h"

// cuDNN's descriptor API: deprecated in cuDNN 9, still built and supported.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace sinter::rt::cuda {

struct CudaDevice::Matmul {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, result = nullptr;
  cublasLtMatmulAlgo_t algo;
  uint64_t workspaceBytes = 0;
  ~Matmul() {
    if (result)
      cublasLtMatrixLayoutDestroy(result);
    if (second)
      cublasLtMatrixLayoutDestroy(second);
    if (first)
      cublasLtMatrixLayoutDestroy(first);
    if (op)
      cublasLtMatmulDescDestroy(op);
  }
};

/// One pass's cuDNN algorithm (its enum's value) and workspace, once chosen.
struct ConvolutionAlgorithm {
  int algo = 0;
  size_t workspaceBytes = 0;
  bool chosen = false;
};

struct CudaDevice::Convolution {
  cudnnTensorDescriptor_t input = nullptr, output = nullptr;
  cudnnFilterDescriptor_t filter = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  ConvolutionAlgorithm algorithms[3]; ///< by ConvolutionPass
  ~Convolution() {
    if (conv)
      cudnnDestroyConvolutionDescriptor(conv);
    if (filter)
      cudnnDestroyFilterDescriptor(filter);
    if (output)
      cudnnDestroyTensorDescriptor(output);
    if (input)
      cudnnDestroyTensorDescriptor(input);
  }
};

struct CudaDevice::BatchNorm {
  cudnnTensorDescriptor_t data = nullptr;     ///< x, y, dy, dx: [n, c, spatial, 1]
  cudnnTensorDescriptor_t channels = nullptr; ///< weight, bias, mean, invstd: [1, c, 1, 1]
  ~BatchNorm() {
    if (channels)
      cudnnDestroyTensorDescriptor(channels);
    if (data)
      cudnnDestroyTensorDescriptor(data);
  }
};

} // namespace sinter::rt::cuda

#endif // SINTER_RT_CUDA_LIBRARYPLANS_H
