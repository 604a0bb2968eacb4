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

/// graph.model ops to functions of linalg/tensor ops, fused.
void buildGraphToLinalgPipeline(mlir::OpPassManager &pm);
/// Tensors to buffers to the LLVM dialect (after buildGraphToLinalgPipeline).
void buildLinalgToLLVMPipeline(mlir::OpPassManager &pm);

/// Registers the pipelines above with the global registry.
void registerPipelines();

} // namespace sinter

#endif // SINTER_PIPELINES_PIPELINES_H
