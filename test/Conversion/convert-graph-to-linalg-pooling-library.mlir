// RUN: sinter-opt %s -split-input-file -convert-graph-to-linalg | FileCheck %s

// On the CPU, f32 poolings and their gradients are the library's ops, in
// the layout they have; the global pooling of an NHWC value is a mean over
// H and W, axes 1 and 2.
// CHECK-LABEL: func.func @cpu
// CHECK:       train.pool2d_forward %{{.*}} {channels_last, kernel = array<i64: 2, 2>, max = true, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : tensor<2x8x8x4xf32> -> tensor<2x4x4x4xf32>
// CHECK:       train.pool2d_backward %{{.*}}, %{{.*}} {kernel = array<i64: 3, 3>, max = false, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x8x8xf32>
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "parallel"]
// CHECK-NOT:   linalg.pooling
module attributes {sinter.device = "cpu"} {
func.func @cpu(%x: tensor<2x8x8x4xf32>, %y: tensor<2x4x8x8xf32>, %g: tensor<2x4x4x4xf32>)
    -> (tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>, tensor<2x4xf32>) {
  %p = graph.max_pool2d %x {channels_last, kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x8x8x4xf32>) -> tensor<2x4x4x4xf32>
  %d = graph.pool2d_grad %y, %g {kernel = array<i64: 3, 3>, max = false, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x8x8xf32>
  %m = graph.global_avg_pool2d %x {channels_last} : (tensor<2x8x8x4xf32>) -> tensor<2x4xf32>
  return %p, %d, %m : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>, tensor<2x4xf32>
}
}

// -----

// CUDA, and f64 anywhere, keep the linalg pooling.
// CHECK-LABEL: func.func @cuda
// CHECK-NOT:   train.pool2d
// CHECK:       linalg.pooling_nchw_max
module attributes {sinter.device = "cuda"} {
func.func @cuda(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32> {
  %p = graph.max_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
  return %p : tensor<2x4x4x4xf32>
}
}

// -----

// CHECK-LABEL: func.func @f64
// CHECK-NOT:   train.pool2d
// CHECK:       linalg.pooling_nchw_sum
module attributes {sinter.device = "cpu"} {
func.func @f64(%x: tensor<2x4x8x8xf64>) -> tensor<2x4x4x4xf64> {
  %p = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x4x8x8xf64>) -> tensor<2x4x4x4xf64>
  return %p : tensor<2x4x4x4xf64>
}
}
