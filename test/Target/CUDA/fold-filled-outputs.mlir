// RUN: sinter-opt %s -sinter-cuda-fold-filled-outputs -split-input-file | FileCheck %s

// The gradient norm's squares of a 1-D gradient, each element written
// once, beside their running total: the squares' payload takes the fill's
// 0.0 and the output the empty tensor; the total still reads its own.
// CHECK-LABEL: func.func @squares_and_total
// CHECK:       %[[EMPTY:.*]] = tensor.empty() : tensor<64xf64>
// CHECK-NOT:   linalg.fill {{.*}} outs(%[[EMPTY]]
// CHECK:       linalg.generic {{.*}} outs(%[[EMPTY]], %{{.*}} : tensor<64xf64>, tensor<f64>)
// CHECK:       ^bb0(%[[IN:.*]]: f32, %{{.*}}: f64, %[[TOTAL:.*]]: f64):
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[SQ:.*]] = arith.mulf
// CHECK:         %[[NEW:.*]] = arith.addf %[[ZERO]], %[[SQ]] : f64
// CHECK:         arith.addf %[[TOTAL]], %[[NEW]] : f64
func.func @squares_and_total(%g: tensor<64xf32>, %total: tensor<f64>) -> (tensor<64xf64>, tensor<f64>) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<64xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<64xf64>) -> tensor<64xf64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                         iterator_types = ["reduction"]}
      ins(%g : tensor<64xf32>) outs(%f, %total : tensor<64xf64>, tensor<f64>) {
  ^bb0(%in: f32, %out: f64, %acc: f64):
    %x = arith.extf %in : f32 to f64
    %sq = arith.mulf %x, %x : f64
    %new = arith.addf %out, %sq : f64
    %t = arith.addf %acc, %new : f64
    linalg.yield %new, %t : f64, f64
  } -> (tensor<64xf64>, tensor<f64>)
  return %r#0, %r#1 : tensor<64xf64>, tensor<f64>
}

// -----

// A sum over rows visits each output element many times: it keeps reading
// what it added so far, and its fill stays.
// CHECK-LABEL: func.func @row_sums
// CHECK:       %[[FILL:.*]] = linalg.fill
// CHECK:       linalg.generic {{.*}} outs(%[[FILL]] : tensor<4xf32>)
func.func @row_sums(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%f : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
