//===- Passes.td - Conversions out of Sinter's dialects ----*- tablegen -*-===//
#ifndef SINTER_CONVERSION_PASSES_TD
#define SINTER_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertGraphToLinalg : Pass<"convert-graph-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers graph ops to linalg, tensor, arith and math";
  let description = [{
    Runs after `graph-model-to-func`. First a graph-level rewrite:
    `matmul(x, transpose(w))` becomes `graph.matmul_transposed(x, w)`, so a
    linear layer reads its weight in place. Then a partial conversion in
    which the graph dialect is illegal, with one set of conversion patterns
    per op family (GraphToLinalg/*.cpp): elementwise ops and their NumPy
    broadcasting become `linalg.generic` maps, reductions reducing
    `linalg.generic`s, matmul a contraction with batch broadcasting,
    convolution and pooling the linalg named ops, and the composite ops
    (softmax, losses, attention, normalisation statistics) compositions of
    those. Shapes must be static: bind B and the other shape symbols with a
    config or -D. Every created op keeps the graph op's location.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "sinter::train::TrainDialect"
  ];
}

def ConvertTrainUpdateToLinalg
    : Pass<"convert-train-update-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers the optimizer's train ops to linalg, arith and math";
  let description = [{
    `train.adamw_update` and `train.sgd_update` become one parallel
    `linalg.generic` each, whose outputs are the parameter and its moments,
    so bufferization updates them in place; the update's scalars are
    computed once in f64 and rounded to the parameter's element type.
    `train.global_norm` becomes one f64 reduction per gradient and a square
    root. Other train ops are left for the target.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::tensor::TensorDialect"
  ];
}

#endif // SINTER_CONVERSION_PASSES_TD
