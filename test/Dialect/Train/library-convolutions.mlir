// RUN: sinter-opt %s -canonicalize | FileCheck %s

// On tensors a library convolution is a value of its operands alone: one
// whose result nobody uses (the gradient of the model's input image) is
// dropped. On buffers it writes `into`, and stays.

// CHECK-LABEL: func.func @unused_on_tensors(
// CHECK-NOT:     train.conv2d_backward_data
// CHECK:         %[[DW:.*]] = train.conv2d_backward_weights %arg0, %arg1
// CHECK:         %[[Y:.*]] = train.conv2d_forward %arg0, %arg2
// CHECK:         return %[[DW]], %[[Y]]
func.func @unused_on_tensors(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x8x8x8xf32>,
                             %w: tensor<8x3x3x3xf32>)
    -> (tensor<8x3x3x3xf32>, tensor<2x8x8x8xf32>) {
  %dx = train.conv2d_backward_data %dy, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x8x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<2x3x8x8xf32>
  %dw = train.conv2d_backward_weights %x, %dy {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32> -> tensor<8x3x3x3xf32>
  %y = train.conv2d_forward %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<2x8x8x8xf32>
  %unused = train.conv2d_forward %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<2x8x8x8xf32>
  return %dw, %y : tensor<8x3x3x3xf32>, tensor<2x8x8x8xf32>
}

// CHECK-LABEL: func.func @on_buffers(
// CHECK:         train.conv2d_forward %arg0, %arg1 into %arg2
// CHECK:         train.conv2d_backward_data %arg2, %arg1 into %arg3
func.func @on_buffers(%x: memref<2x3x8x8xf32>, %w: memref<8x3x3x3xf32>,
                      %y: memref<2x8x8x8xf32>, %dx: memref<2x3x8x8xf32>) {
  train.conv2d_forward %x, %w into %y {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x3x8x8xf32>, memref<8x3x3x3xf32> into memref<2x8x8x8xf32>
  train.conv2d_backward_data %y, %w into %dx {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x8x8x8xf32>, memref<8x3x3x3xf32> into memref<2x3x8x8xf32>
  return
}
