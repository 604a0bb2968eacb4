// RUN: sinter-opt %s -sinter-narrow-widened-tensors -split-input-file | FileCheck %s

// Two bf16 gradients [2, 3, 4] are widened and transposed into f32, and
// gathered into one [2, 4, 6] f32 gradient that a column sum and a
// rounding for a matmul read. The gradient is gathered in bf16 instead:
// the transposes copy bf16, the sum widens each element it reads, and the
// rounding, now a copy of its input, is gone (the matmul reads the bf16
// gradient itself).
// CHECK-LABEL: func.func @gathered(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<2x3x4xbf16>, %[[B:[a-z0-9]+]]: tensor<2x3x4xbf16>
// CHECK:         %[[TA:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<2x3x4xbf16>) outs(%{{.*}} : tensor<2x4x3xbf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:      linalg.yield %[[IN]] : bf16
// CHECK:         %[[TB:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<2x3x4xbf16>) outs(%{{.*}} : tensor<2x4x3xbf16>)
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x4x6xbf16>
// CHECK:         %[[G0:.*]] = tensor.insert_slice %[[TA]] into %[[E]][0, 0, 0] [2, 4, 3] [1, 1, 1] : tensor<2x4x3xbf16> into tensor<2x4x6xbf16>
// CHECK:         %[[G:.*]] = tensor.insert_slice %[[TB]] into %[[G0]][0, 0, 3] [2, 4, 3] [1, 1, 1] : tensor<2x4x3xbf16> into tensor<2x4x6xbf16>
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[G]] : tensor<2x4x6xbf16>) outs(%{{.*}} : tensor<6xf64>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: bf16, %[[ACC:.*]]: f64):
// CHECK-NEXT:      %[[W:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-NEXT:      %[[D:.*]] = arith.extf %[[W]] : f32 to f64
// CHECK-NEXT:      arith.addf %[[ACC]], %[[D]] : f64
// CHECK-NOT:     linalg.generic
// CHECK-NOT:     f32>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[G]] {{.*}} into tensor<8x6xbf16>
// CHECK:         return %[[SUM]], %[[FLAT]]
#id3 = affine_map<(a, b, c) -> (a, b, c)>
#swap = affine_map<(a, b, c) -> (a, c, b)>
#col = affine_map<(a, b, c) -> (c)>
func.func @gathered(%a: tensor<2x3x4xbf16>, %b: tensor<2x3x4xbf16>) -> (tensor<6xf64>, tensor<8x6xbf16>) {
  %e = tensor.empty() : tensor<2x4x3xf32>
  %wa = linalg.generic {indexing_maps = [#swap, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<2x3x4xbf16>) outs(%e : tensor<2x4x3xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x4x3xf32>
  %wb = linalg.generic {indexing_maps = [#swap, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<2x3x4xbf16>) outs(%e : tensor<2x4x3xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x4x3xf32>
  %all = tensor.empty() : tensor<2x4x6xf32>
  %g0 = tensor.insert_slice %wa into %all[0, 0, 0] [2, 4, 3] [1, 1, 1] : tensor<2x4x3xf32> into tensor<2x4x6xf32>
  %g = tensor.insert_slice %wb into %g0[0, 0, 3] [2, 4, 3] [1, 1, 1] : tensor<2x4x3xf32> into tensor<2x4x6xf32>
  %zero = arith.constant 0.0 : f64
  %se = tensor.empty() : tensor<6xf64>
  %init = linalg.fill ins(%zero : f64) outs(%se : tensor<6xf64>) -> tensor<6xf64>
  %sum = linalg.generic {indexing_maps = [#id3, #col], iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%g : tensor<2x4x6xf32>) outs(%init : tensor<6xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %d = arith.extf %in : f32 to f64
    %s = arith.addf %acc, %d : f64
    linalg.yield %s : f64
  } -> tensor<6xf64>
  %re = tensor.empty() : tensor<2x4x6xbf16>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%g : tensor<2x4x6xf32>) outs(%re : tensor<2x4x6xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x4x6xbf16>
  %flat = tensor.collapse_shape %r [[0, 1], [2]] : tensor<2x4x6xbf16> into tensor<8x6xbf16>
  return %sum, %flat : tensor<6xf64>, tensor<8x6xbf16>
}

// -----

// Left alone: a matmul reads the f32 tensor too, so it stays f32.
// CHECK-LABEL: func.func @also_matmul(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x4xf32>)
// CHECK:         arith.extf %{{.*}} : bf16 to f32
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
#id2 = affine_map<(a, b) -> (a, b)>
func.func @also_matmul(%a: tensor<4x4xbf16>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xbf16>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.negf %in : f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %m = linalg.matmul ins(%w, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %n, %m : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// Left alone: part of the gathered tensor was not widened from bf16.
// CHECK-LABEL: func.func @partly_f32(
// CHECK:         tensor.insert_slice %{{.*}} : tensor<2x2xf32> into tensor<2x4xf32>
// CHECK:         tensor.insert_slice %{{.*}} : tensor<2x2xf32> into tensor<2x4xf32>
#id2 = affine_map<(a, b) -> (a, b)>
func.func @partly_f32(%a: tensor<2x2xbf16>, %b: tensor<2x2xf32>) -> tensor<2x4xbf16> {
  %e = tensor.empty() : tensor<2x2xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x2xbf16>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<2x2xf32>
  %all = tensor.empty() : tensor<2x4xf32>
  %g0 = tensor.insert_slice %w into %all[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x4xf32>
  %g = tensor.insert_slice %b into %g0[0, 2] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x4xf32>
  %re = tensor.empty() : tensor<2x4xbf16>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<2x4xf32>) outs(%re : tensor<2x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x4xbf16>
  return %r : tensor<2x4xbf16>
}

// -----

// A rounding back into the bf16 tensor it was widened from (which it then
// reads twice, as input and as output) is that tensor.
// CHECK-LABEL: func.func @round_trip(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<4x4xbf16>)
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[A]]
#id2 = affine_map<(a, b) -> (a, b)>
func.func @round_trip(%a: tensor<4x4xbf16>) -> tensor<4x4xbf16> {
  %e = tensor.empty() : tensor<4x4xf32>
  %w = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xbf16>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %x = arith.extf %in : bf16 to f32
    linalg.yield %x : f32
  } -> tensor<4x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<4x4xf32>) outs(%a : tensor<4x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x4xbf16>
  return %r : tensor<4x4xbf16>
}
