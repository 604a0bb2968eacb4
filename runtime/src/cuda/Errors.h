//===- Errors.h - CUDA, cuBLAS and cuDNN results as Status -------*- C++ -*-===//
//
// Every call into CUDA's libraries is checked; a failure names the call
// and the library's own words for the error.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_CUDA_ERRORS_H
#define SINTER_RT_CUDA_ERRORS_H

#include "sinter/rt/Status.h"

#include <cublasLt.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

namespace sinter::rt::cuda {

Status check(cudaError_t e, const char *call);
Status check(CUresult r, const char *call);
Status check(cublasStatus_t s, const char *call);
Status check(cudnnStatus_t s, const char *call);

} // namespace sinter::rt::cuda

/// Returns the failed Status of `expr`, a checked library call, from the
/// enclosing function: SINTER_CUDA_CHECK(cudaMalloc(&p, n)).
#define SINTER_CUDA_CHECK(expr)                                                \
  SINTER_RT_RETURN_IF_ERROR(::sinter::rt::cuda::check((expr), #expr))

#endif // SINTER_RT_CUDA_ERRORS_H
