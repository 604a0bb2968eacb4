// RUN: sinter-opt %s -sinter-fold-matmul-transposes -split-input-file | FileCheck %s
// RUN: sinter-opt %s -sinter-fold-matmul-transposes=batched=false -split-input-file | FileCheck %s --check-prefix=KEPT

// Attention's backward pass: dK = dS^T @ Q over [batch, heads] collapsed
// into one batch, dS^T a generic copy swapping the last two axes. The
// product reads dS in place ([batch, k, m]); the copy is left unread.
// CHECK-DAG:   #[[KM:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG:   #[[KN:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG:   #[[MN:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @scores_transposed(
// CHECK-SAME:    %[[DS:.+]]: tensor<2x3x8x8xf32>, %[[Q:.+]]: tensor<6x8x4xf32>)
// CHECK:         %[[C:.+]] = tensor.collapse_shape %[[DS]] {{\[}}[0, 1], [2], [3]]
// CHECK:         linalg.batch_matmul indexing_maps = [#[[KM]], #[[KN]], #[[MN]]] ins(%[[C]], %[[Q]] : tensor<6x8x8xf32>, tensor<6x8x4xf32>)
// KEPT-LABEL:  func.func @scores_transposed(
// KEPT:          linalg.generic
// KEPT:          linalg.batch_matmul ins(
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#swap = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @scores_transposed(%ds: tensor<2x3x8x8xf32>, %q: tensor<6x8x4xf32>) -> tensor<6x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x8x8xf32>
  %t = linalg.generic {indexing_maps = [#swap, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ds : tensor<2x3x8x8xf32>) outs(%e : tensor<2x3x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3x8x8xf32>
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<2x3x8x8xf32> into tensor<6x8x8xf32>
  %e2 = tensor.empty() : tensor<6x8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<6x8x4xf32>) -> tensor<6x8x4xf32>
  %p = linalg.batch_matmul ins(%c, %q : tensor<6x8x8xf32>, tensor<6x8x4xf32>) outs(%z : tensor<6x8x4xf32>) -> tensor<6x8x4xf32>
  return %p : tensor<6x8x4xf32>
}

// -----

// A 3-D linalg.transpose as B: read as [batch, n, k].
// CHECK-DAG:   #[[MK:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG:   #[[NK:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @b_transposed(
// CHECK-SAME:    %[[A:.+]]: tensor<3x6x4xf32>, %[[B:.+]]: tensor<3x5x4xf32>)
// CHECK:         linalg.batch_matmul indexing_maps = [#[[MK]], #[[NK]], #{{.+}}] ins(%[[A]], %[[B]] : tensor<3x6x4xf32>, tensor<3x5x4xf32>)
func.func @b_transposed(%a: tensor<3x6x4xf32>, %b: tensor<3x5x4xf32>) -> tensor<3x6x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4x5xf32>
  %bt = linalg.transpose ins(%b : tensor<3x5x4xf32>) outs(%e : tensor<3x4x5xf32>) permutation = [0, 2, 1]
  %e2 = tensor.empty() : tensor<3x6x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x6x5xf32>) -> tensor<3x6x5xf32>
  %p = linalg.batch_matmul ins(%a, %bt : tensor<3x6x4xf32>, tensor<3x4x5xf32>) outs(%z : tensor<3x6x5xf32>) -> tensor<3x6x5xf32>
  return %p : tensor<3x6x5xf32>
}

// -----

// Not folded: a copy that also scales (not a pure copy), a transpose of
// the batch axes, and a collapse that merges the rows into another axis.
// CHECK-LABEL: func.func @not_swaps(
// CHECK-COUNT-3: linalg.batch_matmul ins(
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#swap = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
func.func @not_swaps(%x: tensor<2x3x8x8xf32>, %y: tensor<8x3x8xf32>, %q: tensor<6x8x4xf32>,
                     %q3: tensor<3x8x4xf32>, %q2: tensor<2x8x4xf32>)
    -> (tensor<6x8x4xf32>, tensor<3x8x4xf32>, tensor<2x24x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<2x3x8x8xf32>
  %t = linalg.generic {indexing_maps = [#swap, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3x8x8xf32>) outs(%e : tensor<2x3x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %two : f32
    linalg.yield %s : f32
  } -> tensor<2x3x8x8xf32>
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<2x3x8x8xf32> into tensor<6x8x8xf32>
  %e2 = tensor.empty() : tensor<6x8x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<6x8x4xf32>) -> tensor<6x8x4xf32>
  %p = linalg.batch_matmul ins(%c, %q : tensor<6x8x8xf32>, tensor<6x8x4xf32>) outs(%z : tensor<6x8x4xf32>) -> tensor<6x8x4xf32>
  %e3 = tensor.empty() : tensor<3x8x8xf32>
  %yt = linalg.transpose ins(%y : tensor<8x3x8xf32>) outs(%e3 : tensor<3x8x8xf32>) permutation = [1, 0, 2]
  %e4 = tensor.empty() : tensor<3x8x4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<3x8x4xf32>) -> tensor<3x8x4xf32>
  %p2 = linalg.batch_matmul ins(%yt, %q3 : tensor<3x8x8xf32>, tensor<3x8x4xf32>) outs(%z4 : tensor<3x8x4xf32>) -> tensor<3x8x4xf32>
  %s = linalg.generic {indexing_maps = [#swap, #id],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x3x8x8xf32>) outs(%e : tensor<2x3x8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3x8x8xf32>
  %rows = tensor.collapse_shape %s [[0], [1, 2], [3]] : tensor<2x3x8x8xf32> into tensor<2x24x8xf32>
  %e6 = tensor.empty() : tensor<2x24x4xf32>
  %z6 = linalg.fill ins(%zero : f32) outs(%e6 : tensor<2x24x4xf32>) -> tensor<2x24x4xf32>
  %p3 = linalg.batch_matmul ins(%rows, %q2 : tensor<2x24x8xf32>, tensor<2x8x4xf32>) outs(%z6 : tensor<2x24x4xf32>) -> tensor<2x24x4xf32>
  return %p, %p2, %p3 : tensor<6x8x4xf32>, tensor<3x8x4xf32>, tensor<2x24x4xf32>
}
