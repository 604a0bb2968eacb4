// RUN: sinter-opt %s -sinter-accumulate-matmuls -split-input-file | FileCheck %s

// A gradient accumulated over micro-batches, acc + x^T · dy: the product is
// made onto the accumulator itself, keeping its form (A read transposed),
// and the fill, the temporary and the add are gone.
// CHECK-LABEL: func.func @accumulate(
// CHECK-SAME:    %[[X:.*]]: tensor<8x4xf32>, %[[DY:.*]]: tensor<8x5xf32>, %[[ACC:.*]]: tensor<4x5xf32>)
// CHECK-NOT:   linalg.fill
// CHECK-NOT:   linalg.generic
// CHECK:       %[[R:.*]] = linalg.matmul indexing_maps = [#[[A:.*]], #{{.*}}, #{{.*}}] ins(%[[X]], %[[DY]] : tensor<8x4xf32>, tensor<8x5xf32>) outs(%[[ACC]] : tensor<4x5xf32>)
// CHECK:       return %[[R]]
#ta = affine_map<(m, n, k) -> (k, m)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
func.func @accumulate(%x: tensor<8x4xf32>, %dy: tensor<8x5xf32>, %acc: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul indexing_maps = [#ta, #b, #c] ins(%x, %dy : tensor<8x4xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// The product is read elsewhere too: the add stays.
// CHECK-LABEL: func.func @product_used_twice
// CHECK:       linalg.matmul
// CHECK:       linalg.generic
func.func @product_used_twice(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %acc: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r, %g : tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

// A product onto ones is not a plain product: the add stays.
// CHECK-LABEL: func.func @onto_ones
// CHECK:       linalg.matmul
// CHECK:       linalg.generic
func.func @onto_ones(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %acc: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%one : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// Two products from one fill of zeros each get their own, just before them.
// CHECK-LABEL: func.func @shared_zeros
// CHECK:       %[[Z1:.*]] = linalg.fill
// CHECK-NEXT:  linalg.matmul {{.*}} outs(%[[Z1]]
// CHECK-NEXT:  %[[Z2:.*]] = linalg.fill
// CHECK-NEXT:  linalg.matmul {{.*}} outs(%[[Z2]]
func.func @shared_zeros(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %c: tensor<8x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.matmul ins(%a, %c : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %g, %h : tensor<4x5xf32>, tensor<4x5xf32>
}
