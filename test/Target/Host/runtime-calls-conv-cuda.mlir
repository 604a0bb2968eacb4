// RUN: sinter-opt %s -sinter-runtime-calls | FileCheck %s

// On CUDA the same three library ops call cuDNN through the runtime's
// sinter_cuda_* functions, with the arguments of the CPU's calls
// (runtime-calls-conv.mlir).

// CHECK-LABEL: func.func @passes(
// CHECK:         call @sinter_cuda_conv2d_f32(%{{.+}}, %{{.+}}, %{{.+}}, %c2_i64, %c3_i64, %c8_i64, %c8_i64_{{[0-9]+}}, %c8_i64_{{[0-9]+}}, %c3_i64_{{[0-9]+}}, %c3_i64_{{[0-9]+}}, %c4_i64, %c4_i64_{{[0-9]+}}, %c2_i64_{{[0-9]+}}, %c2_i64_{{[0-9]+}}, %c1_i64, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}})
// CHECK:         call @sinter_cuda_conv2d_backward_data_f32(
// CHECK:         call @sinter_cuda_conv2d_backward_weights_f32(
// CHECK-NOT:     sinter_cpu_
// CHECK-NOT:     train.
module attributes {sinter.device = "cuda"} {
func.func @passes(%x: memref<2x3x8x8xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x4x4xf32>,
                  %dy: memref<2x8x4x4xf32>, %dx: memref<2x3x8x8xf32>, %dw: memref<8x3x3x3xf32>) {
  train.conv2d_forward %x, %w into %y {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x3x8x8xf32>, memref<8x3x3x3xf32> into memref<2x8x4x4xf32>
  train.conv2d_backward_data %dy, %w into %dx {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x8x4x4xf32>, memref<8x3x3x3xf32> into memref<2x3x8x8xf32>
  train.conv2d_backward_weights %x, %dy into %dw {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x3x8x8xf32>, memref<2x8x4x4xf32> into memref<8x3x3x3xf32>
  return
}
}
