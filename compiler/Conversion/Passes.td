//===- Passes.td - Conversions out of Sinter's dialects ----*- tablegen -*-===//
#ifndef SINTER_CONVERSION_PASSES_TD
#define SINTER_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertGraphToLinalg : Pass<"convert-graph-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers graph ops to linalg, tensor, arith and math";
  let description = [{
    Runs after `graph-model-to-func`. Every graph op becomes structured ops
    on tensors: elementwise ops and their NumPy broadcasting become
    `linalg.generic` maps, reductions become reducing `linalg.generic`s,
    matmul a contraction with batch broadcasting, convolution and pooling the
    linalg named ops, and the composite ops (softmax, losses, attention,
    normalisation statistics) compositions of those. Shapes must be static:
    bind B and the other shape symbols with a config or -D. Every created op
    keeps the graph op's location.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "sinter::train::TrainDialect"
  ];
}

#endif // SINTER_CONVERSION_PASSES_TD
