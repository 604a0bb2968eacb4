//===- Matmul.cpp - f32 and bf16 matmuls through cuBLASLt ---------------===//
//
// abi.h's matmul is row-major: C[m, n] = A[m, k] B[k, n], per batch. cuBLAS
// is column-major, where a row-major X[r, c] is X^T, so the product is
// computed as C^T[n, m] = B^T[n, k] A^T[k, m]: cuBLAS's first operand is our
// B, its second our A. Each shape's descriptors and algorithm are made
// once (the heuristic's first choice) and kept. Compute is f32 (TF32 only
// with precision { matmul: TF32 }): f32 results stay within f32's error of
// the CPU's. bf16 inputs
// (precision { compute: BF16 }) keep f32 compute and an f32 result, or a
// bf16 result and bias (precision { activations: BF16 }): cuBLASLt adds
// the bias to the f32 sum and rounds once as it writes. A
// bias over the columns of our C is, column-major, a bias over the rows of
// C^T: cuBLASLt's bias epilogue, which adds it as it writes the product
// (for a shape it has no such algorithm for, the bias is copied into C's
// rows first and the product added to them, and the run says so once).
//
//===----------------------------------------------------------------------===//

#include "cuda/CudaDevice.h"
#include "cuda/Errors.h"
#include "cuda/LibraryPlans.h"

#include "runtime/contract/PlanMemory.h"

#include <algorithm>
#include <cstdio>

namespace sinter::rt::cuda {

namespace {

/// What the memory plan guarantees of every buffer's address.
constexpr uint32_t kBufferAlignment = 64;

/// abi.h's flag bits: the product added to c; a bias added to its rows.
constexpr int64_t kAccumulate = 8, kBias = 16;

/// Our key bits, above abi.h's five flag bits: bf16 inputs; f32 inputs
/// rounded to TF32 (precision.matmul TF32); a bf16 result and bias.
constexpr int64_t kBF16Inputs = 32, kTF32 = 64, kBF16Result = 128;

/// A column-major matrix of `type` of `rows` x `cols`, `batch` of them
/// `stride` elements apart.
Status layout(cublasLtMatrixLayout_t &out, cudaDataType_t type, uint64_t rows,
              uint64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  SINTER_CUDA_CHECK(cublasLtMatrixLayoutCreate(&out, type, rows, cols, ld));
  if (batch == 1)
    return Status::success();
  int32_t count = int32_t(batch);
  SINTER_CUDA_CHECK(cublasLtMatrixLayoutSetAttribute(
      out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
  SINTER_CUDA_CHECK(cublasLtMatrixLayoutSetAttribute(
      out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  return Status::success();
}

} // namespace

CudaDevice::MatmulShape CudaDevice::MatmulShape::dense(int64_t batch, int64_t m,
                                                       int64_t n, int64_t k,
                                                       int64_t flags) {
  bool transposedB = flags & 2, transposedA = flags & 4;
  return {batch, m, n, k, flags, transposedA ? m : k, transposedB ? k : n, n};
}

Expected<CudaDevice::Matmul *> CudaDevice::matmulPlan(const MatmulShape &shape,
                                                      const void *bias) {
  if (auto it = matmuls.find(shape.key()); it != matmuls.end())
    return it->second.get();
  auto [batch, m, n, k, flags, lda, ldb, ldc] = shape;
  bool sharedB = flags & 1, transposedB = flags & 2, transposedA = flags & 4;
  if (transposedA && batch != 1)
    return Status::error("internal error: a batched matmul read its first "
                         "operand transposed");
  cudaDataType_t inputs = (flags & kBF16Inputs) ? CUDA_R_16BF : CUDA_R_32F;
  cudaDataType_t result = (flags & kBF16Result) ? CUDA_R_16BF : CUDA_R_32F;
  auto plan = std::make_unique<Matmul>();
  // TF32: tensor cores with the inputs' mantissas rounded to 10 bits, as
  // torch.backends.cuda.matmul.allow_tf32.
  cublasComputeType_t compute =
      (flags & kTF32) && inputs == CUDA_R_32F ? CUBLAS_COMPUTE_32F_FAST_TF32
                                              : CUBLAS_COMPUTE_32F;
  SINTER_CUDA_CHECK(cublasLtMatmulDescCreate(&plan->op, compute, CUDA_R_32F));
  // Row-major c = a @ b is column-major c^T = b^T a^T: cuBLASLt's first
  // operand is our b, its second our a.
  cublasOperation_t opFirst = transposedB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = transposedA ? CUBLAS_OP_T : CUBLAS_OP_N;
  SINTER_CUDA_CHECK(cublasLtMatmulDescSetAttribute(
      plan->op, CUBLASLT_MATMUL_DESC_TRANSA, &opFirst, sizeof(opFirst)));
  SINTER_CUDA_CHECK(cublasLtMatmulDescSetAttribute(
      plan->op, CUBLASLT_MATMUL_DESC_TRANSB, &opSecond, sizeof(opSecond)));
  if (flags & kBias) {
    if (batch != 1 || (flags & kAccumulate))
      return Status::error("internal error: a bias on a batched or accumulating "
                           "matmul");
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    cudaDataType_t biasType = result;
    SINTER_CUDA_CHECK(cublasLtMatmulDescSetAttribute(
        plan->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)));
    SINTER_CUDA_CHECK(cublasLtMatmulDescSetAttribute(
        plan->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &biasType, sizeof(biasType)));
    // The heuristic reads the pointer's alignment from it: the first call's
    // bias stands for every call's (all start a plan buffer, 64-byte aligned).
    SINTER_CUDA_CHECK(cublasLtMatmulDescSetAttribute(
        plan->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  // Our B: [k, n] row-major is n x k column-major; stored [n, k] it is
  // k x n, read transposed. The same for our A: [m, k] is k x m; stored
  // [k, m] it is m x k, read transposed. A row-major leading dimension is
  // the column-major one.
  int64_t strideB = sharedB ? 0 : k * n;
  SINTER_RT_RETURN_IF_ERROR(
      transposedB ? layout(plan->first, inputs, k, n, ldb, batch, strideB)
                  : layout(plan->first, inputs, n, k, ldb, batch, strideB));
  SINTER_RT_RETURN_IF_ERROR(
      transposedA ? layout(plan->second, inputs, m, k, lda, batch, m * k)
                  : layout(plan->second, inputs, k, m, lda, batch, m * k));
  SINTER_RT_RETURN_IF_ERROR(
      layout(plan->result, result, n, m, ldc, batch, m * n));

  cublasLtMatmulPreference_t preference = nullptr;
  SINTER_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  uint64_t limit = plan::kCudaMatmulWorkspaceBytes;
  cublasStatus_t set = cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof(limit));
  // The memory plan aligns buffers to 64 bytes, not the 256 cuBLASLt
  // otherwise assumes of every pointer.
  uint32_t aligned = kBufferAlignment;
  for (cublasLtMatmulPreferenceAttributes_t a :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (set == CUBLAS_STATUS_SUCCESS)
      set = cublasLtMatmulPreferenceSetAttribute(preference, a, &aligned, sizeof(aligned));
  cublasLtMatmulHeuristicResult_t found = {};
  int count = 0;
  cublasStatus_t asked =
      set != CUBLAS_STATUS_SUCCESS
          ? set
          : cublasLtMatmulAlgoGetHeuristic(blasLt, plan->op, plan->first,
                                           plan->second, plan->result,
                                           plan->result, preference, 1, &found,
                                           &count);
  cublasLtMatmulPreferenceDestroy(preference);
  SINTER_RT_RETURN_IF_ERROR(check(asked, "cublasLtMatmulAlgoGetHeuristic"));
  if (count == 0)
    return Status::error(std::string("cuBLASLt has no ") +
                         (result == CUDA_R_16BF  ? "bf16 (rounded)"
                          : inputs == CUDA_R_16BF ? "bf16"
                                                  : "f32") +
                         " algorithm" +
                         ((flags & kBias) ? " with a bias epilogue" : "") +
                         " for a matmul of " +
                         std::to_string(batch) + " x [" + std::to_string(m) +
                         ", " + std::to_string(k) + "] @ [" + std::to_string(k) +
                         ", " + std::to_string(n) + "]");
  plan->algo = found.algo;
  plan->workspaceBytes = found.workspaceSize;
  Matmul *made = plan.get();
  matmuls[shape.key()] = std::move(plan);
  return made;
}

void CudaDevice::matmul(const void *a, const void *b, void *c, MatmulShape shape,
                        const void *bias, MatmulTypes types) {
  if (skipsWork())
    return;
  auto [batch, m, n, k, flags, lda, ldb, ldc] = shape;
  auto describe = [&] {
    return std::to_string(batch) + " x [" + std::to_string(m) + ", " +
           std::to_string(k) + "] @ [" + std::to_string(k) + ", " +
           std::to_string(n) + "]: ";
  };
  // A shape cuBLASLt has no bias epilogue for takes the bias as c's rows
  // instead, and the product is added to them.
  auto rowsInstead = [](MatmulShape s) {
    s.flags = (s.flags & ~kBias) | kAccumulate;
    return s;
  };
  shape.flags |= types == MatmulTypes::bf16       ? kBF16Inputs | kBF16Result
                 : types == MatmulTypes::bf16Inputs ? kBF16Inputs
                 : tf32Matmuls                      ? kTF32
                                                    : 0;
  bool biasRows = (shape.flags & kBias) && biasAsRows.count(shape.key());
  Expected<Matmul *> plan = matmulPlan(biasRows ? rowsInstead(shape) : shape, bias);
  if ((shape.flags & kBias) && !biasRows && !plan.ok()) {
    // Slower, and a check of the epilogue would pass without it: say so.
    std::fprintf(stderr, "note: matmul %scuBLASLt's bias epilogue is not available (%s); "
                 "the bias is copied into the result's rows instead\n",
                 describe().c_str(), plan.status().message().c_str());
    biasAsRows.insert(shape.key());
    biasRows = true;
    plan = matmulPlan(rowsInstead(shape));
  }
  if (failed(plan.status().withPrefix("matmul " + describe())))
    return;
  if (biasRows) {
    // One row copied, then copies that double the rows done (the bias has
    // c's element type).
    const size_t element = types == MatmulTypes::bf16 ? 2 : sizeof(float);
    const size_t pitch = size_t(ldc) * element, row = size_t(n) * element;
    char *rowsAt = static_cast<char *>(c);
    Status rows = check(cudaMemcpyAsync(c, bias, row, cudaMemcpyDeviceToDevice, compute),
                        "cudaMemcpyAsync");
    for (int64_t done = 1; rows.ok() && done < m; done *= 2)
      rows = check(cudaMemcpy2DAsync(rowsAt + done * pitch, pitch, c, pitch, row,
                                     size_t(std::min(done, m - done)),
                                     cudaMemcpyDeviceToDevice, compute),
                   "cudaMemcpy2DAsync");
    if (failed(rows.withPrefix("matmul " + describe() + "the bias's rows: ")))
      return;
    flags = rowsInstead(shape).flags;
  }
  Expected<void *> work = workspace((*plan)->workspaceBytes);
  if (failed(work.status()))
    return;
  // The plan is shared by every call of this shape; the bias is this call's.
  if ((flags & kBias) &&
      failed(check(cublasLtMatmulDescSetAttribute((*plan)->op,
                                                  CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                  &bias, sizeof(bias)),
                   "cublasLtMatmulDescSetAttribute")
                 .withPrefix("matmul " + describe())))
    return;
  const float one = 1.0f, beta = (flags & kAccumulate) ? 1.0f : 0.0f;
  failed(check(cublasLtMatmul(blasLt, (*plan)->op, &one, b, (*plan)->first, a,
                              (*plan)->second, &beta, c, (*plan)->result, c,
                              (*plan)->result, &(*plan)->algo, *work,
                              (*plan)->workspaceBytes, compute),
               "cublasLtMatmul")
             .withPrefix("matmul " + describe()));
}

} // namespace sinter::rt::cuda
