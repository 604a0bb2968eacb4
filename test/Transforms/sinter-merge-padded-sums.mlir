// RUN: sinter-opt %s -sinter-merge-padded-sums -split-input-file | FileCheck %s

// The gradient of a projection sliced into q, k and v: each slice's
// gradient padded with zeros (a concatenation with zeros), then summed.
// The sum is the three pieces in their places: no zeros, no additions.
// CHECK-LABEL: func.func @three_slices(
// CHECK-SAME:    %[[Q:[a-z0-9]+]]: tensor<2x4xf32>, %[[K:[a-z0-9]+]]: tensor<2x4xf32>, %[[V:[a-z0-9]+]]: tensor<2x4xf32>)
// CHECK-NOT:   linalg.fill
// CHECK:       %[[E:.*]] = tensor.empty() : tensor<2x12xf32>
// CHECK:       %[[A:.*]] = tensor.insert_slice %[[V]] into %[[E]][0, 8] [2, 4] [1, 1]
// CHECK:       %[[B:.*]] = tensor.insert_slice %[[K]] into %[[A]][0, 4] [2, 4] [1, 1]
// CHECK:       %[[C:.*]] = tensor.insert_slice %[[Q]] into %[[B]][0, 0] [2, 4] [1, 1]
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[C]]
#id = affine_map<(i, j) -> (i, j)>
func.func @three_slices(%q: tensor<2x4xf32>, %k: tensor<2x4xf32>, %v: tensor<2x4xf32>) -> tensor<2x12xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x12xf32>
  %e8 = tensor.empty() : tensor<2x8xf32>
  %z8 = linalg.fill ins(%zero : f32) outs(%e8 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %e4 = tensor.empty() : tensor<2x4xf32>
  %z4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x4xf32>) -> tensor<2x4xf32>
  // v's gradient: zeros, then v.
  %v0 = tensor.insert_slice %z8 into %e[0, 0] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<2x12xf32>
  %v1 = tensor.insert_slice %v into %v0[0, 8] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  // k's: zeros, k, zeros.
  %k0 = tensor.insert_slice %z4 into %e[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %k1 = tensor.insert_slice %k into %k0[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %k2 = tensor.insert_slice %z4 into %k1[0, 8] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  // q's: q, then zeros.
  %q0 = tensor.insert_slice %q into %e[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %q1 = tensor.insert_slice %z8 into %q0[0, 4] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<2x12xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v1, %k2, %q1 : tensor<2x12xf32>, tensor<2x12xf32>, tensor<2x12xf32>) outs(%e : tensor<2x12xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    %t = arith.addf %s, %c : f32
    linalg.yield %t : f32
  } -> tensor<2x12xf32>
  return %sum : tensor<2x12xf32>
}

// -----

// Pieces that leave part of the value uncovered: zeros there.
// CHECK-LABEL: func.func @gap(
// CHECK:       %[[Z:.*]] = linalg.fill
// CHECK:       %[[A:.*]] = tensor.insert_slice %arg0 into %[[Z]][0, 0]
// CHECK:       tensor.insert_slice %arg1 into %[[A]][0, 4]
// CHECK-NOT:   linalg.generic
#id = affine_map<(i, j) -> (i, j)>
func.func @gap(%q: tensor<2x4xf32>, %k: tensor<2x4xf32>) -> tensor<2x12xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x12xf32>) -> tensor<2x12xf32>
  %a = tensor.insert_slice %q into %z[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %b = tensor.insert_slice %k into %z[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x12xf32>, tensor<2x12xf32>) outs(%e : tensor<2x12xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<2x12xf32>
  return %sum : tensor<2x12xf32>
}

// -----

// Overlapping pieces are really added: the sum stays.
// CHECK-LABEL: func.func @overlap(
// CHECK:       linalg.generic
// CHECK:         arith.addf
#id = affine_map<(i, j) -> (i, j)>
func.func @overlap(%q: tensor<2x4xf32>, %k: tensor<2x4xf32>) -> tensor<2x12xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x12xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x12xf32>) -> tensor<2x12xf32>
  %a = tensor.insert_slice %q into %z[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %b = tensor.insert_slice %k into %z[0, 2] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x12xf32>, tensor<2x12xf32>) outs(%e : tensor<2x12xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<2x12xf32>
  return %sum : tensor<2x12xf32>
}

// -----

// A sum that is not of its inputs alone (a scaled one) stays.
// CHECK-LABEL: func.func @scaled(
// CHECK:       linalg.generic
// CHECK:         arith.mulf
#id = affine_map<(i, j) -> (i, j)>
func.func @scaled(%q: tensor<2x4xf32>, %k: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<2x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = tensor.insert_slice %q into %z[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %b = tensor.insert_slice %k into %z[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %m = arith.mulf %y, %two : f32
    %s = arith.addf %x, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32>
  return %sum : tensor<2x8xf32>
}
