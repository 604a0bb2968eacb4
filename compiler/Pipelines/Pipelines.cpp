//===- Pipelines.cpp - Sinter's pass pipelines -----------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Conversion/Passes.h"
#include "compiler/Target/CPU/Passes.h"
#include "compiler/Target/Host/Passes.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/Transforms/Passes.h"
#include "dialects/Train/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
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
  pm.addPass(train::createDistSyncBatchNorm());
  pm.addPass(graph::createGraphAutodiff());
  pm.addPass(graph::createGraphModelToFunc());
  pm.addPass(createConvertGraphToLinalg());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(train::createTrainAccumulate());
  pm.addPass(train::createDistBucket());
  // The update, once the gradients are final: the step is the whole step.
  pm.addPass(train::createTrainBuildStep());
}

void buildGraphToLinalgPipeline(mlir::OpPassManager &pm) {
  buildGraphToTrainPipeline(pm);
  buildTrainToLinalgPipeline(pm);
}

void buildTrainToLinalgPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createConvertTrainUpdateToLinalg());
  // Elementwise maps and broadcasts fold into their consumers, so a chain
  // such as exp(x - max) / sum becomes few loops.
  pm.addPass(createFuseElementwise());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(mlir::createCanonicalizerPass());
}

void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm) {
  pm.addPass(host::createRecordPlan());
  pm.addPass(cpu::createCPUMathApproximations());
  // After the last CSE: bufferization's analysis is linear only when no
  // tensor.empty is shared.
  pm.addPass(createSplitEmptyTensors());
  mlir::bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      mlir::bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(mlir::bufferization::createOneShotBufferizePass(bufferize));
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
  pm.addPass(host::createLibraryCalls(host::LibraryCallsOptions{"cpu"}));
  pm.addPass(host::createLowerCopies());
  // Parallel dimensions become scf.parallel, spread over the cores by the
  // OpenMP runtime; reductions stay sequential loops inside.
  pm.addPass(mlir::createConvertLinalgToParallelLoopsPass());
  // One function per loop nest, shared by equal nests: OpenMP's outlining
  // stays linear, and each kernel is compiled once.
  pm.addPass(cpu::createCPUOutlineLoops());
  pm.addPass(mlir::createConvertSCFToOpenMPPass());
  // The alloca scopes it wraps loop bodies in hold no allocas here:
  // canonicalization inlines them before the loops become branches.
  pm.addPass(mlir::createCanonicalizerPass());
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

void registerPipelines() {
  mlir::PassPipelineRegistration<>(
      "sinter-graph-to-train",
      "Differentiate graph models and build the step's micro-batch loop",
      buildGraphToTrainPipeline);
  mlir::PassPipelineRegistration<>(
      "sinter-graph-to-linalg",
      "Lower graph models to fused linalg functions",
      buildGraphToLinalgPipeline);
  mlir::PassPipelineRegistration<>(
      "sinter-linalg-to-llvm",
      "Bufferize and lower linalg functions to the LLVM dialect",
      buildLinalgToLLVMPipeline);
}

} // namespace sinter
