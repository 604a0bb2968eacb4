// RUN: sinter-opt %s -sinter-cuda-pitch-matmul-rows -split-input-file | FileCheck %s

// A language model head's logits: rows of 5 f32 (20 bytes) become the first
// 5 columns of rows of 16, through the fill and the matmul that write them
// and the reshape the loss reads them through.
// CHECK-LABEL: func.func @logits
// CHECK:       %[[WIDE:.*]] = tensor.empty() : tensor<6x16xf32>
// CHECK:       %[[COLS:.*]] = tensor.extract_slice %[[WIDE]][0, 0] [6, 5] [1, 1] : tensor<6x16xf32> to tensor<6x5xf32>
// CHECK:       linalg.fill {{.*}} outs(%[[COLS]] : tensor<6x5xf32>)
// CHECK:       linalg.matmul {{.*}} {sinter.padded_operands = array<i64: 2>}
// CHECK-NOT:   tensor.empty() : tensor<6x5xf32>
func.func @logits(%x: tensor<6x4xf32>, %w: tensor<5x4xf32>) -> tensor<2x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %l = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : tensor<6x4xf32>, tensor<5x4xf32>) outs(%f : tensor<6x5xf32>) -> tensor<6x5xf32>
  %l3 = tensor.expand_shape %l [[0, 1], [2]] output_shape [2, 3, 5] : tensor<6x5xf32> into tensor<2x3x5xf32>
  %se = tensor.empty() : tensor<2x3xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%l3 : tensor<2x3x5xf32>) outs(%s0 : tensor<2x3xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}

// -----

// Their gradient in bf16, made by a loop and read by the matmul through a
// reshape: rows of 5 bf16 (10 bytes) become rows of 16.
// CHECK-LABEL: func.func @gradient
// CHECK:       %[[WIDE:.*]] = tensor.empty() : tensor<2x3x16xbf16>
// CHECK:       %[[COLS:.*]] = tensor.extract_slice %[[WIDE]][0, 0, 0] [2, 3, 5] [1, 1, 1]
// CHECK:       linalg.generic {{.*}} outs(%[[COLS]] : tensor<2x3x5xbf16>)
// The matmul's own result has rows of 4 f32: 16 bytes, as they are.
// CHECK:       tensor.empty() : tensor<6x4xf32>
func.func @gradient(%g: tensor<2x3x5xf32>, %w: tensor<5x4xbf16>) -> tensor<6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5xbf16>
  %n = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%g : tensor<2x3x5xf32>) outs(%e : tensor<2x3x5xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x3x5xbf16>
  %n2 = tensor.collapse_shape %n [[0, 1], [2]] : tensor<2x3x5xbf16> into tensor<6x5xbf16>
  %ce = tensor.empty() : tensor<6x4xf32>
  %c0 = linalg.fill ins(%zero : f32) outs(%ce : tensor<6x4xf32>) -> tensor<6x4xf32>
  %dx = linalg.matmul ins(%n2, %w : tensor<6x5xbf16>, tensor<5x4xbf16>) outs(%c0 : tensor<6x4xf32>) -> tensor<6x4xf32>
  return %dx : tensor<6x4xf32>
}

// -----

// A second operand the function makes (the head's bf16 copy of the
// embedding), whose 5 rows are the product's columns, gets 16 rows.
// CHECK-LABEL: func.func @second_operand_rows
// CHECK:       %[[WIDE:.*]] = tensor.empty() : tensor<16x8xbf16>
// CHECK:       %[[ROWS:.*]] = tensor.extract_slice %[[WIDE]][0, 0] [5, 8] [1, 1] : tensor<16x8xbf16> to tensor<5x8xbf16>
// CHECK:       linalg.generic {{.*}} outs(%[[ROWS]] : tensor<5x8xbf16>)
// CHECK:       tensor.empty() : tensor<6x16xf32>
// CHECK:       linalg.matmul {{.*}} {sinter.padded_operands = array<i64: 1, 2>}
func.func @second_operand_rows(%x: tensor<6x8xbf16>, %w: tensor<5x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %we = tensor.empty() : tensor<5x8xbf16>
  %wb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<5x8xf32>) outs(%we : tensor<5x8xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<5x8xbf16>
  %e = tensor.empty() : tensor<6x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %l = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                      affine_map<(m, n, k) -> (n, k)>,
                                      affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %wb : tensor<6x8xbf16>, tensor<5x8xbf16>) outs(%f : tensor<6x5xf32>) -> tensor<6x5xf32>
  %se = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%l : tensor<6x5xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// A result the function returns keeps its dense rows: the caller's buffer
// is dense.
// CHECK-LABEL: func.func @returned
// CHECK-NOT:   tensor.extract_slice
// CHECK-NOT:   sinter.padded_operands
// CHECK:       tensor.empty() : tensor<6x5xf32>
// CHECK-NOT:   tensor.extract_slice
func.func @returned(%x: tensor<6x4xf32>, %w: tensor<4x5xf32>) -> tensor<6x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %l = linalg.matmul ins(%x, %w : tensor<6x4xf32>, tensor<4x5xf32>) outs(%f : tensor<6x5xf32>) -> tensor<6x5xf32>
  return %l : tensor<6x5xf32>
}

// -----

// A reshape that joins rows needs them dense: so do they stay.
// CHECK-LABEL: func.func @flattened
// CHECK-NOT:   tensor.extract_slice
func.func @flattened(%x: tensor<6x4xf32>, %w: tensor<4x5xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6x5xf32>) -> tensor<6x5xf32>
  %l = linalg.matmul ins(%x, %w : tensor<6x4xf32>, tensor<4x5xf32>) outs(%f : tensor<6x5xf32>) -> tensor<6x5xf32>
  %flat = tensor.collapse_shape %l [[0, 1]] : tensor<6x5xf32> into tensor<30xf32>
  %se = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%flat : tensor<30xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
