// RUN: sinter-opt %s -sinter-one-pass-variance -cse -sinter-merge-sibling-reductions -split-input-file | FileCheck %s

// Layer norm's statistics: the row sum (for the mean), then the sum of
// squared deviations from the mean. The second becomes sum x^2, which
// joins the first as one reduction over x, and an elementwise
// s2 - m (2 s1 - n m) per row, n = 8, clamped at 0.
// CHECK-LABEL: func.func @layer_norm_stats(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x8xf32>
// CHECK:         %[[S:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x8xf32>)
// CHECK:           %[[W:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK:           arith.addf %{{.*}}, %[[W]] : f64
// CHECK:           %[[W2:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK:           %[[SQ:.*]] = arith.mulf %[[W2]], %[[W2]] : f64
// CHECK:           arith.addf %{{.*}}, %[[SQ]] : f64
// CHECK-NOT:     iterator_types = ["parallel", "reduction"]
// CHECK:         %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[S]]#0 : tensor<4xf64>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel"]} ins(%[[S]]#0, %[[S]]#1, %[[MEAN]] : tensor<4xf64>, tensor<4xf64>, tensor<4xf32>)
// CHECK:           %[[M:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK:           %[[N:.*]] = arith.constant 8.0
// CHECK:           %[[TWO:.*]] = arith.constant 2.0
// CHECK:           %[[NM:.*]] = arith.mulf %[[N]], %[[M]]
// CHECK:           %[[T:.*]] = arith.mulf %[[TWO]], %{{.*}}
// CHECK:           %[[I:.*]] = arith.subf %[[T]], %[[NM]]
// CHECK:           %[[MI:.*]] = arith.mulf %[[M]], %[[I]]
// CHECK:           %[[R:.*]] = arith.subf %{{.*}}, %[[MI]]
// CHECK-NEXT:      arith.maximumf %[[R]], %{{.*}} : f64
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#one = affine_map<(i) -> (i)>
func.func @layer_norm_stats(%x: tensor<4x8xf32>) -> tensor<4xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4xf64>
  %init = linalg.fill ins(%zero : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %t = arith.addf %acc, %w : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  %em = tensor.empty() : tensor<4xf32>
  %mean = linalg.generic {indexing_maps = [#one, #one], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf64>) outs(%em : tensor<4xf32>) {
  ^bb0(%in: f64, %out: f32):
    %n = arith.constant 0.125 : f64
    %m = arith.mulf %in, %n : f64
    %t = arith.truncf %m : f64 to f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %v = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mean : tensor<4x8xf32>, tensor<4xf32>) outs(%init : tensor<4xf64>) {
  ^bb0(%in: f32, %m: f32, %acc: f64):
    %d = arith.subf %in, %m : f32
    %sq = arith.mulf %d, %d : f32
    %w = arith.extf %sq : f32 to f64
    %t = arith.addf %acc, %w : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  return %v : tensor<4xf64>
}

// -----

// Left alone: a sum that starts from another value, and a product of two
// different deviations.
// CHECK-LABEL: func.func @left(
// CHECK-COUNT-2: arith.subf %{{.*}}, %{{.*}} : f32
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @left(%x: tensor<4x8xf32>, %m: tensor<4xf32>, %acc: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4xf64>
  %init = linalg.fill ins(%zero : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %a = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<4x8xf32>, tensor<4xf32>) outs(%acc : tensor<4xf64>) {
  ^bb0(%in: f32, %mm: f32, %s: f64):
    %d = arith.subf %in, %mm : f32
    %sq = arith.mulf %d, %d : f32
    %w = arith.extf %sq : f32 to f64
    %t = arith.addf %s, %w : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  %b = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<4x8xf32>, tensor<4xf32>) outs(%init : tensor<4xf64>) {
  ^bb0(%in: f32, %mm: f32, %s: f64):
    %d = arith.subf %in, %mm : f32
    %sq = arith.mulf %d, %in : f32
    %w = arith.extf %sq : f32 to f64
    %t = arith.addf %s, %w : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  return %a, %b : tensor<4xf64>, tensor<4xf64>
}
