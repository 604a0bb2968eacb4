// RUN: sinter-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

// An accumulating kernel gradient adds into its accumulator's own buffer:
// no new buffer, and the result is that buffer. One that writes gets a
// buffer of its own.
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME:    %[[X:[^:]*]]: memref<2x3x8x8xf32>, %[[DY:[^:]*]]: memref<2x8x8x8xf32>, %[[ACC:[^:]*]]: memref<8x3x3x3xf32>)
// CHECK-NOT:   memref.alloc
// CHECK:       train.conv2d_backward_weights %[[X]], %[[DY]] into %[[ACC]] {accumulate,
// CHECK-NOT:   memref.copy
// CHECK:       return %[[ACC]]
func.func @in_place(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x8x8x8xf32>, %acc: tensor<8x3x3x3xf32>) -> tensor<8x3x3x3xf32> {
  %r = train.conv2d_backward_weights %x, %dy into %acc {accumulate, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32> into tensor<8x3x3x3xf32> -> tensor<8x3x3x3xf32>
  return %r : tensor<8x3x3x3xf32>
}

// An accumulator that is a strided part of a larger buffer (a gradient
// bucket's slice) is added into through a dense copy, copied back.
// CHECK-LABEL: func.func @strided(
// CHECK:       %[[PART:.*]] = memref.subview
// CHECK:       %[[DENSE:.*]] = memref.alloc() {{.*}}: memref<8x3x3x3xf32>
// CHECK:       memref.copy %[[PART]], %[[DENSE]]
// CHECK:       train.conv2d_backward_weights %{{.*}}, %{{.*}} into %[[DENSE]] {accumulate,
// CHECK:       memref.copy %[[DENSE]], %[[PART]]
func.func @strided(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x8x8x8xf32>, %bucket: tensor<8x3x3x4xf32>) -> tensor<8x3x3x4xf32> {
  %part = tensor.extract_slice %bucket[0, 0, 0, 0] [8, 3, 3, 3] [1, 1, 1, 1] : tensor<8x3x3x4xf32> to tensor<8x3x3x3xf32>
  %r = train.conv2d_backward_weights %x, %dy into %part {accumulate, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32> into tensor<8x3x3x3xf32> -> tensor<8x3x3x3xf32>
  %b = tensor.insert_slice %r into %bucket[0, 0, 0, 0] [8, 3, 3, 3] [1, 1, 1, 1] : tensor<8x3x3x3xf32> into tensor<8x3x3x4xf32>
  return %b : tensor<8x3x3x4xf32>
}
