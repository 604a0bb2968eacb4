// RUN: sinter-opt %s -sinter-accumulate-products=convolutions=true -split-input-file | FileCheck %s
// RUN: sinter-opt %s -sinter-accumulate-products -split-input-file | FileCheck %s --check-prefix=OFF

// With `convolutions` (the CPU), a library convolution's kernel gradient
// added to its accumulator becomes the call that adds into it; without it
// (CUDA, whose cuDNN call writes), the add stays.
// CHECK-LABEL: func.func @accumulate(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x8x8x3xf32>, %[[DY:[^:]*]]: tensor<2x8x8x8xf32>, %[[ACC:[^:]*]]: tensor<8x3x3x3xf32>)
// CHECK-NOT:   linalg.generic
// CHECK:       %[[R:.*]] = train.conv2d_backward_weights %[[X]], %[[DY]] into %[[ACC]] {accumulate, channels_last,
// CHECK:       return %[[R]]
// OFF-LABEL:   func.func @accumulate(
// OFF:         train.conv2d_backward_weights %{{[^ ]*}}, %{{[^ ]*}} {channels_last,
// OFF:         linalg.generic
#id = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @accumulate(%x: tensor<2x8x8x3xf32>, %dy: tensor<2x8x8x8xf32>, %acc: tensor<8x3x3x3xf32>) -> tensor<8x3x3x3xf32> {
  %dw = train.conv2d_backward_weights %x, %dy {channels_last, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x8x8x3xf32>, tensor<2x8x8x8xf32> -> tensor<8x3x3x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%dw : tensor<8x3x3x3xf32>) outs(%acc : tensor<8x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<8x3x3x3xf32>
  return %sum : tensor<8x3x3x3xf32>
}

// -----

// A repeated block's backward function returns its kernel's gradient and
// both callers add it to an accumulator: the function takes the
// accumulator and adds into it.
// CHECK-LABEL: func.func private @block_bwd(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x3x8x8xf32>, %[[DY:[^:]*]]: tensor<2x8x8x8xf32>, %[[ACC:[^:]*]]: tensor<8x3x3x3xf32>) -> tensor<8x3x3x3xf32>
// CHECK:       %[[G:.*]] = train.conv2d_backward_weights %[[X]], %[[DY]] into %[[ACC]] {accumulate,
// CHECK:       return %[[G]]
// CHECK-LABEL: func.func @two_callers(
// CHECK-SAME:    %[[ACC0:[^:]*]]: tensor<8x3x3x3xf32>)
// CHECK-NOT:   linalg.generic
// CHECK:       %[[R1:.*]] = call @block_bwd(%{{.*}}, %{{.*}}, %[[ACC0]])
// CHECK:       %[[R2:.*]] = call @block_bwd(%{{.*}}, %{{.*}}, %[[R1]])
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R2]]
// OFF-LABEL:   func.func @two_callers(
// OFF-COUNT-2: linalg.generic
#id2 = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func private @block_bwd(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x8x8x8xf32>) -> tensor<8x3x3x3xf32> {
  %dw = train.conv2d_backward_weights %x, %dy {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32> -> tensor<8x3x3x3xf32>
  return %dw : tensor<8x3x3x3xf32>
}
func.func @two_callers(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x8x8x8xf32>, %acc: tensor<8x3x3x3xf32>) -> tensor<8x3x3x3xf32> {
  %r1 = call @block_bwd(%x, %dy) : (tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32>) -> tensor<8x3x3x3xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r1 : tensor<8x3x3x3xf32>) outs(%acc : tensor<8x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<8x3x3x3xf32>
  %r2 = call @block_bwd(%x, %dy) : (tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32>) -> tensor<8x3x3x3xf32>
  %a2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%r2 : tensor<8x3x3x3xf32>) outs(%a1 : tensor<8x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<8x3x3x3xf32>
  return %a2 : tensor<8x3x3x3xf32>
}

// -----

// A kernel gradient read elsewhere too (here: returned as well) is left.
// CHECK-LABEL: func.func @read_twice(
// CHECK:       train.conv2d_backward_weights %arg0, %arg1 {dilation
// CHECK:       linalg.generic
#id3 = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @read_twice(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x8x8x8xf32>, %acc: tensor<8x3x3x3xf32>) -> (tensor<8x3x3x3xf32>, tensor<8x3x3x3xf32>) {
  %dw = train.conv2d_backward_weights %x, %dy {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32> -> tensor<8x3x3x3xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%dw : tensor<8x3x3x3xf32>) outs(%acc : tensor<8x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<8x3x3x3xf32>
  return %sum, %dw : tensor<8x3x3x3xf32>, tensor<8x3x3x3xf32>
}

// -----

// The accumulating call is made where the kernel gradient was, not at the
// add: the activations it reads are not kept alive past it.
// CHECK-LABEL: func.func @in_place_of_the_gradient(
// CHECK:       %[[R:.*]] = train.conv2d_backward_weights %arg0, %arg1 into %arg2 {accumulate,
// CHECK-NEXT:  %[[LATER:.*]] = train.conv2d_backward_data
// CHECK:       return %[[R]], %[[LATER]]
#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @in_place_of_the_gradient(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x8x8x8xf32>, %acc: tensor<8x3x3x3xf32>,
                                    %w: tensor<8x3x3x3xf32>) -> (tensor<8x3x3x3xf32>, tensor<2x3x8x8xf32>) {
  %dw = train.conv2d_backward_weights %x, %dy {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32> -> tensor<8x3x3x3xf32>
  %later = train.conv2d_backward_data %dy, %w {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x8x8x8xf32>, tensor<8x3x3x3xf32> -> tensor<2x3x8x8xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%dw : tensor<8x3x3x3xf32>) outs(%acc : tensor<8x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<8x3x3x3xf32>
  return %sum, %later : tensor<8x3x3x3xf32>, tensor<2x3x8x8xf32>
}
