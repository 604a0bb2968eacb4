// RUN: sinter-opt %s -sinter-fold-matmul-transposes | FileCheck %s

// The backward pass of y = x @ w^T: dx = dy @ w (w^T read transposed is w
// itself), dw = (x^T @ dy)^T = dy^T @ x. No transpose is left: the matmuls
// read their operands in place, as [m, k] or [k, m] and [k, n] or [n, k].

// CHECK-DAG: #[[KM:.+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[KN:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[MN:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>

// CHECK-LABEL: func.func @backward(
// CHECK-SAME:    %[[X:.+]]: tensor<8x4xf32>, %[[W:.+]]: tensor<6x4xf32>, %[[DY:.+]]: tensor<8x6xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.matmul ins(%[[DY]], %[[W]] : tensor<8x6xf32>, tensor<6x4xf32>)
// CHECK:         linalg.matmul indexing_maps = [#[[KM]], #[[KN]], #[[MN]]] ins(%[[DY]], %[[X]] : tensor<8x6xf32>, tensor<8x4xf32>) {{.*}} -> tensor<6x4xf32>
// CHECK-NOT:     linalg.transpose
func.func @backward(%x: tensor<8x4xf32>, %w: tensor<6x4xf32>, %dy: tensor<8x6xf32>)
    -> (tensor<8x4xf32>, tensor<6x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e46 = tensor.empty() : tensor<4x6xf32>
  %wt = linalg.transpose ins(%w : tensor<6x4xf32>) outs(%e46 : tensor<4x6xf32>) permutation = [1, 0]
  %e84 = tensor.empty() : tensor<8x4xf32>
  %z84 = linalg.fill ins(%zero : f32) outs(%e84 : tensor<8x4xf32>) -> tensor<8x4xf32>
  // dx = dy @ (w^T)^T, as the forward pass's transposed-B form.
  %dx = linalg.matmul indexing_maps = [#mk, #nk, #mn]
      ins(%dy, %wt : tensor<8x6xf32>, tensor<4x6xf32>) outs(%z84 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %e48 = tensor.empty() : tensor<4x8xf32>
  %xt = linalg.transpose ins(%x : tensor<8x4xf32>) outs(%e48 : tensor<4x8xf32>) permutation = [1, 0]
  %z46 = linalg.fill ins(%zero : f32) outs(%e46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %dwt = linalg.matmul ins(%xt, %dy : tensor<4x8xf32>, tensor<8x6xf32>) outs(%z46 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %e64 = tensor.empty() : tensor<6x4xf32>
  %dw = linalg.transpose ins(%dwt : tensor<4x6xf32>) outs(%e64 : tensor<6x4xf32>) permutation = [1, 0]
  return %dx, %dw : tensor<8x4xf32>, tensor<6x4xf32>
}

// A product accumulated onto something else than zeros keeps its transpose.
// CHECK-LABEL: func.func @accumulated(
// CHECK:         linalg.matmul
// CHECK:         linalg.transpose
func.func @accumulated(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>, %c: tensor<4x6xf32>)
    -> tensor<6x4xf32> {
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x6xf32>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
  %e = tensor.empty() : tensor<6x4xf32>
  %t = linalg.transpose ins(%p : tensor<4x6xf32>) outs(%e : tensor<6x4xf32>) permutation = [1, 0]
  return %t : tensor<6x4xf32>
}
