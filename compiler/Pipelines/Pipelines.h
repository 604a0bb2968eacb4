//===- Pipelines.h - Sinter's pass pipelines ---------------------*- C++ -*-===//
//
// One function per pipeline; sinterc and `sinter-opt --sinter-...` run the
// same code.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PIPELINES_PIPELINES_H
#define SINTER_PIPELINES_PIPELINES_H

#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace sinter {

/// Where and for what the CUDA target builds its kernels.
struct CUDAOptions {
  /// The chips with a cubin (A100, H100), oldest first; the newest's PTX
  /// goes along for later GPUs.
  std::vector<std::string> chips = {"sm_80", "sm_90"};
  /// PTX ISA 8.0: sm_90 needs 7.8 or later.
  std::string features = "+ptx80";
  /// fatbin (one image of every chip's cubin and the newest's PTX, for
  /// programs), isa (PTX text per chip), bin (cubin per chip).
  std::string format = "fatbin";
  /// The CUDA toolkit whose ptxas and fatbinary are used; empty: found on
  /// PATH.
  std::string toolkitPath;
};

/// The train phase's loss as each micro-batch's exact share of the global
/// batch's loss (train-normalize-loss): the first step of the pipelines
/// below, and the one whose failure is the user's error.
void buildLossPipeline(mlir::OpPassManager &pm);
/// Graph models to functions whose train step is the whole step of one rank:
/// the normalized loss, autodiff, the lowering to linalg and the micro-batch
/// loop (what `sinterc --emit=train` prints).
void buildGraphToTrainPipeline(mlir::OpPassManager &pm);
/// buildGraphToTrainPipeline after the loss pipeline: where a model that
/// cannot train yet (an op without a gradient) fails.
void buildStepPipeline(mlir::OpPassManager &pm);
/// The update in linalg, then elementwise fusion.
void buildTrainToLinalgPipeline(mlir::OpPassManager &pm);
/// graph.model ops to functions of linalg/tensor ops, fused:
/// buildGraphToTrainPipeline, then buildTrainToLinalgPipeline.
void buildGraphToLinalgPipeline(mlir::OpPassManager &pm);
/// Tensors to buffers to the LLVM dialect (after buildGraphToLinalgPipeline).
void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm);
/// The CPU's (or, with `cuda`, CUDA's) passes up to the memory plan: after
/// it every step has its complete plan (StepPlan.h). --report-memory.
void buildLinalgToMemoryPlanPipeline(mlir::OpPassManager &pm, bool cuda);
/// The CUDA target, in three parts: tensors to buffers, loop nests mapped to
/// kernels in one gpu.module and host code (what `sinterc --emit=gpu`
/// prints); the kernels to NVVM and a binary of `cuda.format`; then the
/// host code to the LLVM dialect, launching through the runtime.
void buildLinalgToGPUPipeline(mlir::OpPassManager &pm);
void buildGPUKernelsPipeline(mlir::OpPassManager &pm, const CUDAOptions &cuda);
void buildLinalgToCUDAPipeline(mlir::OpPassManager &pm, const CUDAOptions &cuda);
/// The CUDA target's step run on the CPU, for tests where there is no GPU:
/// the same kernels as host loops (sinter-cuda-launches-on-host, every
/// launch) and the same library calls, which the runtime's
/// sinter_cuda_on_host library answers on host memory (sinterc
/// --cuda-on-host).
void buildLinalgToCUDAOnHostPipeline(mlir::OpPassManager &pm);

/// Registers the pipelines above with the global registry.
void registerPipelines();

} // namespace sinter

#endif // SINTER_PIPELINES_PIPELINES_H
