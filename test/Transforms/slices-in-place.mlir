// RUN: sinter-opt %s -sinter-slices-in-place -split-input-file | FileCheck %s

// q, k and v gradients, each [2, 3, 4, 8] collapsed to [2, 3, 32] and
// inserted into the [2, 3, 96] gradient: they go, uncollapsed, into the
// destination expanded to [2, 3, 12, 8] (heads 4..7, 8..11, 0..3), and the
// result is collapsed once. In a block's function, the loop that made each
// piece then writes it in its place (empty-tensor elimination).
// CHECK-LABEL: func.func @qkv(
// CHECK:       %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [2, 3, 12, 8] : tensor<2x3x96xf32> into tensor<2x3x12x8xf32>
// CHECK:       %[[S:.*]] = tensor.extract_slice %[[E]][0, 0, 4, 0] [2, 3, 4, 8] [1, 1, 1, 1] : tensor<2x3x12x8xf32> to tensor<2x3x4x8xf32>
// CHECK:       linalg.generic {{.*}} outs(%[[S]] : tensor<2x3x4x8xf32>)
// CHECK:       %[[I1:.*]] = tensor.insert_slice %{{.*}} into %[[E]][0, 0, 4, 0] [2, 3, 4, 8] [1, 1, 1, 1]
// CHECK:       %[[I2:.*]] = tensor.insert_slice %{{.*}} into %[[I1]][0, 0, 8, 0] [2, 3, 4, 8] [1, 1, 1, 1]
// CHECK:       %[[I3:.*]] = tensor.insert_slice %{{.*}} into %[[I2]][0, 0, 0, 0] [2, 3, 4, 8] [1, 1, 1, 1]
// CHECK:       %[[R:.*]] = tensor.collapse_shape %[[I3]] {{\[\[}}0], [1], [2, 3]] : tensor<2x3x12x8xf32> into tensor<2x3x96xf32>
// CHECK-NOT:   tensor.collapse_shape
// CHECK:       return %[[R]]
#t = affine_map<(a, b, c, d) -> (a, c, b, d)>
#id = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @qkv(%q: tensor<2x4x3x8xf32>, %k: tensor<2x3x4x8xf32>, %v: tensor<2x3x4x8xf32>) -> tensor<2x3x96xf32> attributes {sinter.block = "h"} {
  %e = tensor.empty() : tensor<2x3x4x8xf32>
  %qt = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x4x3x8xf32>) outs(%e : tensor<2x3x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3x4x8xf32>
  %qc = tensor.collapse_shape %qt [[0], [1], [2, 3]] : tensor<2x3x4x8xf32> into tensor<2x3x32xf32>
  %kc = tensor.collapse_shape %k [[0], [1], [2, 3]] : tensor<2x3x4x8xf32> into tensor<2x3x32xf32>
  %vc = tensor.collapse_shape %v [[0], [1], [2, 3]] : tensor<2x3x4x8xf32> into tensor<2x3x32xf32>
  %d = tensor.empty() : tensor<2x3x96xf32>
  %0 = tensor.insert_slice %qc into %d[0, 0, 32] [2, 3, 32] [1, 1, 1] : tensor<2x3x32xf32> into tensor<2x3x96xf32>
  %1 = tensor.insert_slice %kc into %0[0, 0, 64] [2, 3, 32] [1, 1, 1] : tensor<2x3x32xf32> into tensor<2x3x96xf32>
  %2 = tensor.insert_slice %vc into %1[0, 0, 0] [2, 3, 32] [1, 1, 1] : tensor<2x3x32xf32> into tensor<2x3x96xf32>
  return %2 : tensor<2x3x96xf32>
}

// -----

// A piece that does not start on a whole inner group (offset 4 in groups
// of 8) is left as it is, and so is one inserted without a reshape.
// CHECK-LABEL: func.func @misaligned(
// CHECK-NOT:   tensor.expand_shape
// CHECK:       tensor.insert_slice %{{.*}} into %{{.*}}[0, 4] [2, 32] [1, 1] : tensor<2x32xf32> into tensor<2x96xf32>
// CHECK:       tensor.insert_slice %{{.*}} into %{{.*}}[0, 64] [2, 32] [1, 1] : tensor<2x32xf32> into tensor<2x96xf32>
func.func @misaligned(%p: tensor<2x4x8xf32>, %r: tensor<2x32xf32>, %d: tensor<2x96xf32>) -> tensor<2x96xf32> {
  %c = tensor.collapse_shape %p [[0], [1, 2]] : tensor<2x4x8xf32> into tensor<2x32xf32>
  %0 = tensor.insert_slice %c into %d[0, 4] [2, 32] [1, 1] : tensor<2x32xf32> into tensor<2x96xf32>
  %1 = tensor.insert_slice %r into %0[0, 64] [2, 32] [1, 1] : tensor<2x32xf32> into tensor<2x96xf32>
  return %1 : tensor<2x96xf32>
}

// -----

// Outside a block's function (a step function, whose gradients must stay in
// their own buffers) the destination is expanded, but the loop still writes
// a tensor of its own.
// CHECK-LABEL: func.func @step(
// CHECK:       %[[E:.*]] = tensor.empty() : tensor<2x3x4x8xf32>
// CHECK:       linalg.generic {{.*}} outs(%[[E]] : tensor<2x3x4x8xf32>)
// CHECK:       tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 4, 0] [2, 3, 4, 8] [1, 1, 1, 1]
#t2 = affine_map<(a, b, c, d) -> (a, c, b, d)>
#id2 = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @step(%q: tensor<2x4x3x8xf32>, %d: tensor<2x3x96xf32>) -> tensor<2x3x96xf32> {
  %e = tensor.empty() : tensor<2x3x4x8xf32>
  %qt = linalg.generic {indexing_maps = [#t2, #id2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x4x3x8xf32>) outs(%e : tensor<2x3x4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x3x4x8xf32>
  %qc = tensor.collapse_shape %qt [[0], [1], [2, 3]] : tensor<2x3x4x8xf32> into tensor<2x3x32xf32>
  %0 = tensor.insert_slice %qc into %d[0, 0, 32] [2, 3, 32] [1, 1, 1] : tensor<2x3x32xf32> into tensor<2x3x96xf32>
  return %0 : tensor<2x3x96xf32>
}
