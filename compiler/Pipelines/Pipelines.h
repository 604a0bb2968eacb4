//===- Pipelines.h - Sinter's pass pipelines ---------------------*- C++ -*-===//
//
// One function per pipeline; sinterc and `sinter-opt --sinter-...` run the
// same code.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_PIPELINES_PIPELINES_H
#define SINTER_PIPELINES_PIPELINES_H

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace sinter {

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

/// Registers the pipelines above with the global registry.
void registerPipelines();

} // namespace sinter

#endif // SINTER_PIPELINES_PIPELINES_H
