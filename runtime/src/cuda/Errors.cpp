//===- Errors.cpp - CUDA, cuBLAS and cuDNN results as Status ------------===//

#include "cuda/Errors.h"
#include "cuda/Driver.h"

#include <string>

namespace sinter::rt::cuda {

static Status failed(const char *call, const std::string &why) {
  return Status::error(std::string(call) + " failed: " + why);
}

Status check(cudaError_t e, const char *call) {
  if (e == cudaSuccess)
    return Status::success();
  return failed(call, std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e));
}

Status check(CUresult r, const char *call) {
  if (r == CUDA_SUCCESS)
    return Status::success();
  const char *name = nullptr, *text = nullptr;
  if (const Driver *d = driver()) {
    d->getErrorName(r, &name);
    d->getErrorString(r, &text);
  }
  return failed(call, std::string(name ? name : "CUDA driver error") + " (" +
                          std::to_string(int(r)) + ")" +
                          (text ? std::string(": ") + text : ""));
}

Status check(cublasStatus_t s, const char *call) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return Status::success();
  return failed(call, std::string(cublasLtGetStatusName(s)) + ": " +
                          cublasLtGetStatusString(s));
}

Status check(cudnnStatus_t s, const char *call) {
  if (s == CUDNN_STATUS_SUCCESS)
    return Status::success();
  return failed(call, cudnnGetErrorString(s));
}

} // namespace sinter::rt::cuda
