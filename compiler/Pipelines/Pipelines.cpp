//===- Pipelines.cpp - Sinter's pass pipelines -----------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Conversion/Passes.h"
#include "compiler/Target/CPU/Passes.h"
#include "compiler/Target/CUDA/Passes.h"
#include "compiler/Target/Host/Passes.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/Transforms/Passes.h"
#include "dialects/Train/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace sinter {

void buildLossPipeline(mlir::OpPassManager &pm) {
  pm.addPass(train::createTrainNormalizeLoss());
}

void buildGraphToTrainPipeline(mlir::OpPassManager &pm) {
  // The loss first: autodiff then differentiates each micro-batch's exact
  // share of the global batch's loss.
  buildLossPipeline(pm);
  buildStepPipeline(pm);
}

void buildStepPipeline(mlir::OpPassManager &pm) {
  // Before autodiff: a fused attention or batch-norm has its own gradient.
  // Statistics synchronized over ranks stay spelled out.
  pm.addPass(graph::createGraphFuseAttention());
  pm.addPass(graph::createGraphPackAttention());
  pm.addPass(graph::createGraphRoundResiduals());
  pm.addPass(train::createDistSyncBatchNorm());
  pm.addPass(graph::createGraphFuseBatchNorm());
  pm.addPass(graph::createGraphChannelsLast());
  pm.addPass(graph::createGraphAutodiff());
  pm.addPass(graph::createGraphExpandAttentionGrad());
  // Sums of products with per-channel (per-row) factors sum the other
  // operand; the sums that became equal are merged.
  pm.addPass(graph::createGraphFactorSums());
  pm.addPass(graph::createGraphModelToFunc());
  pm.addPass(createConvertGraphToLinalg());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(train::createTrainAccumulate());
  pm.addPass(train::createDistBucket());
  // The update, once the gradients are final: the step is the whole step.
  pm.addPass(train::createTrainBuildStep());
  pm.addPass(train::createDistShard());
}

void buildGraphToLinalgPipeline(mlir::OpPassManager &pm) {
  buildGraphToTrainPipeline(pm);
  buildTrainToLinalgPipeline(pm);
}

void buildTrainToLinalgPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createConvertTrainUpdateToLinalg());
  // A gradient summed from zero-padded slices is the slices in place.
  pm.addPass(createMergePaddedSums());
  // Elementwise maps and broadcasts fold into their consumers, so a chain
  // such as exp(x - max) / sum becomes few loops.
  pm.addPass(createFuseElementwise());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(mlir::createCanonicalizerPass());
}

/// Tensors to buffers in one planned arena: what every target shares after
/// its own preparation of the linalg, up to its library calls.
static void addBufferizationPasses(mlir::OpPassManager &pm) {
  // A value a layer returns twice (once reshaped) would be bufferized twice.
  pm.addPass(createResultsOnce());
  // After the last CSE: bufferization's analysis is linear only when no
  // tensor.empty is shared.
  pm.addPass(createSplitEmptyTensors());
  // A piece inserted into a larger value (a slice of the merged q, k and v
  // gradient) is computed in its place there.
  pm.addPass(createSlicesInPlace());
  mlir::bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      mlir::bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(mlir::bufferization::createOneShotBufferizePass(bufferize));
  // A private function that updates an argument in place (a block's
  // gradient accumulators) or returns it returns nothing for it: its
  // callers keep their buffer. Public functions (the steps, whose results
  // the plan records) are left as they are.
  pm.addPass(mlir::bufferization::createDropEquivalentBufferResultsPass());
  // A loop that updates its buffers in place yields them unchanged; folding
  // that lets its results be the caller's output buffers (below).
  pm.addPass(mlir::createCanonicalizerPass());
  // Parameters and moments were updated in their own buffers.
  pm.addPass(createFoldInPlaceUpdates());
  // Results become caller-owned output buffers: the runtime allocates every
  // buffer of the plan, and a step returns nothing.
  pm.addPass(createDistinctResults());
  mlir::bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(mlir::bufferization::createBufferResultsToOutParamsPass(outParams));
  // Then the train ops become runtime calls: a bucket's gradients are now
  // the step's gradient buffers, which the runtime sums.
  pm.addPass(host::createRuntimeCalls());
  // Every intermediate buffer lives in one arena the runtime allocates once.
  pm.addPass(createPlanMemory());
}

/// The host code to the LLVM dialect, with the step's entry points: the
/// tail every target shares.
static void addHostToLLVMPasses(mlir::OpPassManager &pm) {
  // A run asked to stop skips the rest of its step's micro-batches.
  pm.addPass(host::createInterruptibleMicroBatches());
  pm.addPass(mlir::memref::createExpandStridedMetadataPass());
  pm.addPass(mlir::createLowerAffinePass());
  pm.addPass(mlir::createSCFToControlFlowPass());
  // LLVM first (it expands rsqrt), then libm for what LLVM has no
  // instruction for (erf, tanh, pow).
  pm.addPass(mlir::createConvertMathToLLVMPass());
  pm.addPass(mlir::createConvertMathToLibmPass());
  pm.addPass(mlir::createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(mlir::createArithToLLVMConversionPass());
  // Static shapes: every buffer crosses the step's boundary as a bare pointer.
  mlir::ConvertFuncToLLVMPassOptions func;
  func.useBarePtrCallConv = true;
  pm.addPass(mlir::createConvertFuncToLLVMPass(func));
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  pm.addPass(mlir::createConvertOpenMPToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  pm.addPass(host::createEntryPoints());
  pm.addPass(mlir::createCanonicalizerPass());
}

/// What a target does before bufferization, and the bufferization.
static void addTargetBufferizationPasses(mlir::OpPassManager &pm, bool cuda) {
  pm.addPass(host::createRecordPlan());
  // Threads take a generic's parallel loops; its reductions run inside.
  ParallelReductionsOptions reductions;
  reductions.splitColumns = !cuda;
  pm.addPass(createParallelReductions(reductions));
  // Matmuls read their operands transposed in place, not through copies.
  // Batched ones only on the CPU: cuBLASLt's batched transposed reads have
  // not run on a GPU yet (and GPT's attention is fused there).
  host::FoldMatmulTransposesOptions transposes;
  transposes.batched = !cuda;
  pm.addPass(host::createFoldMatmulTransposes(transposes));
  // compute: BF16 rounds the inputs of the matmuls, their forms settled.
  pm.addPass(createBF16Matmuls());
  // A backward function takes the copies it reads of what the forward one
  // saved, made there once (CSE merges them with the forward pass's own).
  pm.addPass(createNarrowCallBoundaries());
  pm.addPass(mlir::createCSEPass());
  // Widened bf16 values (cuDNN's attention gradients) stay bf16 in memory.
  pm.addPass(createNarrowWidenedTensors());
  // Each rounding joins the loop that computed its value, which writes both.
  // On a GPU, a cheap map read by several loops is computed in each instead
  // of stored: memory, not arithmetic, bounds those loops.
  FuseElementwiseOptions fusion;
  fusion.recomputeCheapMaps = cuda;
  pm.addPass(createFuseElementwise(fusion));
  // Copies that fusion made alike (a moved chain and the forward pass's own).
  pm.addPass(mlir::createCSEPass());
  // A variance's sum of squared deviations reads its rows once, with the
  // mean's sum (f64 sums keep the cancellation below what f32 carries), and
  // its combination fuses with the rest of its row's maps. On a GPU a
  // softmax's maximum and sum come from one pass over its rows too.
  pm.addPass(createOnePassVariance());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(createFuseElementwise());
  if (cuda)
    pm.addPass(createOnlineSoftmax());
  // Reductions that read an input in common read it once.
  pm.addPass(createMergeSiblingReductions());
  if (cuda) {
    // The residual stream is stored by its layer norm's statistics, made in
    // the layer that wrote it.
    pm.addPass(createRowReductionsAcrossCalls());
    pm.addPass(cuda::createCUDAFuseIntoRowReductions());
  } else {
    pm.addPass(cpu::createCPUMathApproximations());
  }
  // Biases are added in the matmul call, gradients accumulate in it (in
  // the CPU convolution call too).
  pm.addPass(host::createMatmulBias());
  host::AccumulateProductsOptions accumulate;
  accumulate.convolutions = !cuda;
  pm.addPass(host::createAccumulateProducts(accumulate));
  // activations: BF16 has the matmuls that make activations write bf16.
  pm.addPass(host::createBF16MatmulResults());
  // Narrow column sums (bias gradients) fill the GPU through partial sums.
  if (cuda) {
    pm.addPass(cuda::createCUDASplitColumnReductions());
    // What reads a reduction's results, next to it, so the plan gives it
    // bytes of its own and the reduction's launch can take it in.
    pm.addPass(cuda::createCUDAConsumersFollowReductions());
    // An output written once per element needs no fill read back (so a
    // reduction beside it can run as a block).
    pm.addPass(cuda::createCUDAFoldFilledOutputs());
    // Rows of matmul operands start 16 bytes apart, as cuBLASLt's fast
    // kernels need (GPT-2's 50,257 logits).
    pm.addPass(cuda::createCUDAPitchMatmulRows());
  }
  // Cross-entropy's gradient is written over the logits, spent by then.
  pm.addPass(createWriteOverDeadInputs());
  addBufferizationPasses(pm);
}

void buildLinalgToMemoryPlanPipeline(mlir::OpPassManager &pm, bool cuda) {
  addTargetBufferizationPasses(pm, cuda);
}

void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm) {
  addTargetBufferizationPasses(pm, /*cuda=*/false);
  pm.addPass(host::createLibraryCalls(host::LibraryCallsOptions{"cpu"}));
  pm.addPass(host::createLowerCopies());
  pm.addPass(cpu::createCPUCollapseInnerDims());
  // Parallel dimensions become scf.parallel, spread over the cores by the
  // OpenMP runtime; reductions stay sequential loops inside.
  pm.addPass(mlir::createConvertLinalgToParallelLoopsPass());
  // In loops (in a named matmul's body the expansion would hide its form).
  pm.addPass(cpu::createCPUExpandBF16());
  // Threads over the outer dimensions, vector lanes over the inner ones.
  pm.addPass(cpu::createCPUParallelOuterDims());
  pm.addPass(cpu::createCPURegisterAccumulators());
  // One function per loop nest, shared by equal nests: OpenMP's outlining
  // stays linear, and each kernel is compiled once.
  pm.addPass(cpu::createCPUOutlineLoops());
  pm.addPass(mlir::createConvertSCFToOpenMPPass());
  // The alloca scopes it wraps loop bodies in hold no allocas here:
  // canonicalization inlines them before the loops become branches.
  pm.addPass(mlir::createCanonicalizerPass());
  addHostToLLVMPasses(pm);
}

/// The CUDA target up to its kernels as gpu.launch ops in the host code.
static void addGPUMappingPasses(mlir::OpPassManager &pm) {
  addTargetBufferizationPasses(pm, /*cuda=*/true);
  pm.addPass(host::createLibraryCalls(host::LibraryCallsOptions{"cuda"}));
  pm.addPass(host::createLowerCopies());
  // Long reductions: a block of threads per output, the rest loops.
  pm.addPass(cuda::createCUDABlockReductions());
  pm.addPass(mlir::createConvertLinalgToParallelLoopsPass());
  pm.addPass(mlir::createCanonicalizerPass());
  // Independent neighbouring nests over the same space: one kernel.
  pm.addPass(cuda::createCUDAMergeParallelLoops());
  pm.addPass(cuda::createCUDAMapToGPU());
  // A thread's running sum stays in a register, not stored every row.
  pm.addPass(cuda::createCUDARegisterAccumulators());
  // Several iterations' loads in flight: a summing thread waits on latency.
  pm.addPass(cuda::createCUDAUnrollSums());
  // What the kernels took over (scalar loads on the host) dies here.
  pm.addPass(mlir::createCanonicalizerPass());
}

void buildLinalgToGPUPipeline(mlir::OpPassManager &pm) {
  addGPUMappingPasses(pm);
  // Constants (shapes, strides, identities) go into the kernels: divisions
  // by a known extent become shifts and multiplies, not runtime divisions.
  pm.addPass(mlir::createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(cuda::createCUDABareKernelArguments());
  pm.addPass(mlir::createGpuKernelOutliningPass());
  pm.addPass(cuda::createCUDAMergeKernels());
  pm.addPass(cuda::createCUDAHostMemory());
  // What runs between the host's waits and decisions may replay as a graph.
  pm.addPass(cuda::createCUDAGraphRegions());
}

void buildGPUKernelsPipeline(mlir::OpPassManager &pm, const CUDAOptions &cuda) {
  mlir::OpPassManager &kernels = pm.nest<mlir::gpu::GPUModuleOp>();
  kernels.addPass(mlir::createLowerAffinePass());
  kernels.addPass(mlir::createSCFToControlFlowPass());
  mlir::ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  nvvm.useBarePtrCallConv = true;
  kernels.addPass(mlir::createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(mlir::createCanonicalizerPass());
  kernels.addPass(mlir::createReconcileUnrealizedCastsPass());
  for (const std::string &chip : cuda.chips) {
    mlir::GpuNVVMAttachTargetOptions target;
    target.chip = chip;
    target.features = cuda.features;
    target.optLevel = 3;
    pm.addPass(mlir::createGpuNVVMAttachTarget(target));
  }
  // A fatbinary of several chips: PTX per chip from LLVM, then ptxas and
  // fatbinary over all of them.
  bool fatbin = cuda.format == "fatbin";
  mlir::GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = cuda.toolkitPath;
  binary.compilationTarget = fatbin ? "isa" : cuda.format;
  pm.addPass(mlir::createGpuModuleToBinaryPass(binary));
  if (fatbin)
    pm.addPass(cuda::createCUDAFatbinary({cuda.toolkitPath}));
}

void buildLinalgToCUDAPipeline(mlir::OpPassManager &pm, const CUDAOptions &cuda) {
  buildLinalgToGPUPipeline(pm);
  buildGPUKernelsPipeline(pm, cuda);
  pm.addPass(cuda::createCUDALaunchCalls());
  addHostToLLVMPasses(pm);
}

void buildLinalgToCUDAOnHostPipeline(mlir::OpPassManager &pm) {
  addGPUMappingPasses(pm);
  cuda::CUDALaunchesOnHostOptions launches;
  launches.all = true;
  pm.addPass(cuda::createCUDALaunchesOnHost(launches));
  // Each kernel's loops a function of its own, as the CPU's are: LLVM then
  // optimises small functions, on every core.
  pm.addPass(cpu::createCPUOutlineLoops());
  addHostToLLVMPasses(pm);
}

void registerPipelines() {
  mlir::PassPipelineRegistration<>(
      "sinter-graph-to-train",
      "Differentiate graph models and build the step's micro-batch loop",
      buildGraphToTrainPipeline);
  mlir::PassPipelineRegistration<>("sinter-graph-to-linalg",
                                   "Lower graph models to fused linalg functions",
                                   buildGraphToLinalgPipeline);
  mlir::PassPipelineRegistration<>(
      "sinter-linalg-to-memory-plan",
      "Bufferize fused linalg for the CPU into one planned arena, with runtime calls",
      [](mlir::OpPassManager &pm) {
        buildLinalgToMemoryPlanPipeline(pm, /*cuda=*/false);
      });
  mlir::PassPipelineRegistration<>(
      "sinter-linalg-to-llvm", "Bufferize and lower linalg functions to the LLVM dialect",
      buildLinalgToLLVMPipeline);
  mlir::PassPipelineRegistration<>(
      "sinter-linalg-to-gpu",
      "Bufferize linalg functions and map their loops to GPU kernels",
      buildLinalgToGPUPipeline);
  mlir::PassPipelineRegistration<>(
      "sinter-linalg-to-cuda-on-host",
      "Bufferize linalg functions into CUDA's kernels and library calls, the "
      "kernels run as host loops (sinterc --cuda-on-host)",
      buildLinalgToCUDAOnHostPipeline);
  mlir::PassPipelineRegistration<>(
      "sinter-linalg-to-cuda",
      "Bufferize linalg functions into CUDA kernels and host code in the "
      "LLVM dialect",
      [](mlir::OpPassManager &pm) { buildLinalgToCUDAPipeline(pm, CUDAOptions()); });
}

} // namespace sinter
