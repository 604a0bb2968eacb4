// RUN: sinter-opt %s -convert-graph-to-linalg -split-input-file -verify-diagnostics | FileCheck %s

// Broadcasting: a size-1 or missing dimension is read at index 0 / not at all.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @broadcast
// CHECK:       linalg.generic {indexing_maps = [#[[COL]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK:         arith.addf
func.func @broadcast(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = graph.add %a, %b : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Integer and float forms of one op.
// CHECK-LABEL: func.func @int_max
// CHECK:       arith.maxsi
func.func @int_max(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = graph.maximum %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// Matmul with a shared 2-D right operand: the batch folds into the rows of
// one linalg.matmul (which the CPU target hands to its library).
// CHECK-LABEL: func.func @matmul
// CHECK:       %[[A:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:       %[[Z:.*]] = linalg.fill
// CHECK:       %[[C:.*]] = linalg.matmul ins(%[[A]], %{{.*}} : tensor<6x4xf32>, tensor<4x5xf32>) outs(%[[Z]]
// CHECK:       tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2]] output_shape [2, 3, 5]
func.func @matmul(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = graph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

// Equal batches: one linalg.batch_matmul over the flattened batch.
// CHECK-LABEL: func.func @batch_matmul
// CHECK:       linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<6x3x4xf32>, tensor<6x4x5xf32>)
func.func @batch_matmul(%a: tensor<2x3x3x4xf32>, %b: tensor<2x3x4x5xf32>) -> tensor<2x3x3x5xf32> {
  %0 = graph.matmul %a, %b : (tensor<2x3x3x4xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x3x5xf32>
  return %0 : tensor<2x3x3x5xf32>
}

// -----

// Other batch broadcasts: one contraction whose maps read index 0 of a
// broadcast dimension.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-LABEL: func.func @broadcast_matmul
// CHECK:       linalg.generic {indexing_maps = [#[[A]], #[[B]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
func.func @broadcast_matmul(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
  %0 = graph.matmul %a, %b : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
  return %0 : tensor<2x5x3x6xf32>
}

// -----

// A keepdim reduction reduces, then expands the kept axis back.
// CHECK-LABEL: func.func @reduce_keepdim
// CHECK:       %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32)
// CHECK:       %[[R:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%[[INIT]]
// CHECK:         arith.maximumf
// CHECK:       tensor.expand_shape %[[R]] {{\[\[}}0, 1]] output_shape [4, 1]
func.func @reduce_keepdim(%a: tensor<4x6xf32>) -> tensor<4x1xf32> {
  %0 = graph.reduce_max %a {axes = array<i64: 1>, keepdim = true} : (tensor<4x6xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// Gathers clamp their index into the table.
// CHECK-LABEL: func.func @embedding
// CHECK:       linalg.generic
// CHECK:         arith.index_cast
// CHECK:         arith.maxsi
// CHECK:         arith.minsi
// CHECK:         tensor.extract
func.func @embedding(%ids: tensor<2x3xi32>, %t: tensor<10x8xf32>) -> tensor<2x3x8xf32> {
  %0 = graph.embedding %ids, %t : (tensor<2x3xi32>, tensor<10x8xf32>) -> tensor<2x3x8xf32>
  return %0 : tensor<2x3x8xf32>
}

// -----

// Convolution with padding becomes tensor.pad and the linalg named op.
// CHECK-LABEL: func.func @conv
// CHECK:       tensor.pad
// CHECK:       linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = graph.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// For the CPU, an f32 convolution stays whole, as the library's op that
// takes the padding itself: no padded copy of the input.
// CHECK-LABEL: func.func @conv_cpu
// CHECK-NOT:   tensor.pad
// CHECK:       train.conv2d_forward %arg0, %arg1 {dilation = array<i64: 1, 1>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<1x4x4x4xf32>
// CHECK-NOT:   linalg.conv_2d_nchw_fchw
module attributes {sinter.device = "cpu"} {
func.func @conv_cpu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = graph.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}
}

// -----

// For CUDA too (cuDNN takes the padding), with both gradients whole: no
// padded, dilated, flipped or transposed copies.
// CHECK-LABEL: func.func @conv_grads_cuda
// CHECK-NOT:   tensor.pad
// CHECK:       train.conv2d_forward %arg0, %arg1
// CHECK:       train.conv2d_backward_data %arg2, %arg1
// CHECK:       train.conv2d_backward_weights %arg0, %arg2
// CHECK-NOT:   linalg.conv_2d_nchw_fchw
module attributes {sinter.device = "cuda"} {
func.func @conv_grads_cuda(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %dy: tensor<1x4x4x4xf32>)
    -> (tensor<1x4x4x4xf32>, tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) {
  %y = graph.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %dx = graph.conv2d_grad_input %dy, %w {dilation = array<i64: 1, 1>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<1x3x8x8xf32>
  %dw = graph.conv2d_grad_weight %x, %dy {dilation = array<i64: 1, 1>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x4x4x4xf32>) -> tensor<4x3x3x3xf32>
  return %y, %dx, %dw : tensor<1x4x4x4xf32>, tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
}
}

// -----

func.func @dynamic(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  // expected-error @below {{code generation needs static shapes, but this operation has a dynamic dimension; bind B and the other shape symbols with --config or -D B=...}}
  %0 = graph.relu %a : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// matmul(x, transpose(w)) is rewritten on the graph, before conversion, to
// matmul_transposed: linalg.matmul reads w through a transposed map, and the
// transpose, now unused, is not computed.
// CHECK-DAG: #[[MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @linear
// CHECK-NOT:   linalg.transpose
// CHECK:       linalg.matmul indexing_maps = [#[[MK]], #[[NK]], #{{.*}}] ins(%{{.*}}, %arg1 : tensor<8x4xf32>, tensor<5x4xf32>)
// CHECK-NOT:   linalg.transpose
func.func @linear(%x: tensor<8x4xf32>, %w: tensor<5x4xf32>) -> tensor<8x5xf32> {
  %t = graph.transpose %w {permutation = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %y = graph.matmul %x, %t : (tensor<8x4xf32>, tensor<4x5xf32>) -> tensor<8x5xf32>
  return %y : tensor<8x5xf32>
}

// -----

// A transpose with other uses stays, and is converted once.
// CHECK-LABEL: func.func @linear_and_transpose
// CHECK-COUNT-1: linalg.transpose
// CHECK:       linalg.matmul indexing_maps
func.func @linear_and_transpose(%x: tensor<8x4xf32>, %w: tensor<5x4xf32>) -> (tensor<8x5xf32>, tensor<4x5xf32>) {
  %t = graph.transpose %w {permutation = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %y = graph.matmul %x, %t : (tensor<8x4xf32>, tensor<4x5xf32>) -> tensor<8x5xf32>
  return %y, %t : tensor<8x5xf32>, tensor<4x5xf32>
}

// -----

// Cross-entropy is logsumexp(x) - x[t] per row: one pass for the row's max,
// one for the sum of exp(x - max), and no tensor the size of the logits
// (neither the exponentials nor the log-probabilities) is written.
// CHECK-LABEL: func.func @cross_entropy
// CHECK-NOT:   tensor.empty() : tensor<4x10xf32>
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x10xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:         arith.maximumf
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<4x10xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<4xf64>)
// CHECK:         arith.subf
// CHECK:         math.exp
// CHECK:         arith.extf
// CHECK:         arith.addf
// CHECK-NOT:   tensor.empty() : tensor<4x10xf32>
// CHECK:       return
func.func @cross_entropy(%logits: tensor<4x10xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %0 = graph.cross_entropy %logits, %y {reduction = "mean", label_smoothing = 0.0 : f64} : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Softmax shares those two passes and computes exp(x - max) / sum in its
// one elementwise pass.
// CHECK-LABEL: func.func @softmax
// CHECK:       arith.maximumf
// CHECK:       math.exp
// CHECK:       tensor.empty() : tensor<4x10xf32>
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK:         arith.subf
// CHECK:         math.exp
// CHECK:         arith.divf
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = graph.softmax %x {axis = 1 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}
