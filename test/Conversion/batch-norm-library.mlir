// RUN: sinter-opt %s -convert-graph-to-linalg | FileCheck %s

// On CUDA a whole batch-norm and its gradient are cuDNN's calls. The
// forward call gives 1 / sqrt(var + eps), which becomes the variance the
// graph returns (1 / invstd^2 - eps, at least 0); the backward call takes
// it back.
// CHECK-LABEL: func.func @forward_and_back(
// CHECK:       %[[F:.*]]:3 = train.batch_norm_forward %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64} : tensor<8x16x3x4xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<8x16x3x4xf32>, tensor<16xf32>, tensor<16xf32>
// CHECK:       linalg.generic
// CHECK:         arith.mulf
// CHECK:         arith.divf
// CHECK:         arith.subf
// CHECK:         arith.maximumf
// CHECK:       linalg.generic
// CHECK:         arith.addf
// CHECK:         math.rsqrt
// CHECK:       %[[G:.*]]:3 = train.batch_norm_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64} : tensor<8x16x3x4xf32>, tensor<8x16x3x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32> -> tensor<8x16x3x4xf32>, tensor<16xf32>, tensor<16xf32>
// CHECK-NOT:   linalg.reduce
module attributes {sinter.device = "cuda"} {
func.func @forward_and_back(%x: tensor<8x16x3x4xf32>, %w: tensor<16xf32>, %b: tensor<16xf32>,
                            %g: tensor<8x16x3x4xf32>)
    -> (tensor<8x16x3x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x16x3x4xf32>, tensor<16xf32>, tensor<16xf32>) {
  %y, %mean, %var = graph.batch_norm %x, %w, %b {epsilon = 1.0e-05 : f64}
      : (tensor<8x16x3x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<8x16x3x4xf32>, tensor<16xf32>, tensor<16xf32>)
  %dx, %dw, %db = graph.batch_norm_grad %x, %w, %mean, %var, %g {epsilon = 1.0e-05 : f64}
      : tensor<8x16x3x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x16x3x4xf32>
  return %y, %mean, %var, %dx, %dw, %db
      : tensor<8x16x3x4xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x16x3x4xf32>, tensor<16xf32>, tensor<16xf32>
}
}
