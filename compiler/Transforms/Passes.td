//===- Passes.td - Sinter's passes on upstream dialects ----*- tablegen -*-===//
#ifndef SINTER_TRANSFORMS_PASSES_TD
#define SINTER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseElementwise : Pass<"sinter-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuses elementwise linalg maps into elementwise consumers";
  let description = [{
    Chains of elementwise maps (and the broadcasts and transposes feeding
    them) become one loop nest. Producers are fused only into consumers whose
    iterators are all parallel: fusing into a reduction would recompute the
    producer for every reduced element, and fusing into a contraction would
    turn a library matmul or convolution into naive loops.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::affine::AffineDialect"];
}

#endif // SINTER_TRANSFORMS_PASSES_TD
