//===- Pipelines.cpp - Sinter's pass pipelines -----------------------------===//

#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Conversion/Passes.h"
#include "dialects/Graph/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace sinter {

void buildGraphToLinalgPipeline(mlir::OpPassManager &pm) {
  pm.addPass(graph::createGraphModelToFunc());
  pm.addPass(createConvertGraphToLinalg());
  pm.addPass(mlir::createCanonicalizerPass());
  // Elementwise maps and broadcasts fold into their consumers, so a chain
  // such as exp(x - max) / sum becomes few loops.
  pm.addPass(mlir::createLinalgElementwiseOpFusionPass());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(mlir::createCanonicalizerPass());
}

void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm) {
  mlir::bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      mlir::bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(mlir::bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(mlir::createConvertLinalgToLoopsPass());
  pm.addPass(mlir::memref::createExpandStridedMetadataPass());
  pm.addPass(mlir::createLowerAffinePass());
  pm.addPass(mlir::createSCFToControlFlowPass());
  // erf, tanh and pow have no LLVM instruction: call libm for them.
  pm.addPass(mlir::createConvertMathToLibmPass());
  pm.addPass(mlir::createConvertToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  pm.addPass(mlir::createCanonicalizerPass());
}

void registerPipelines() {
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
