// RUN: sinter-opt %s -sinter-parallel-reductions -split-input-file | FileCheck %s
// RUN: sinter-opt %s -sinter-parallel-reductions=split-columns -split-input-file | FileCheck %s --check-prefix=COLUMNS

// A reduction over rows (the bias gradient) runs a thread per column: its
// parallel loop becomes the outermost.
// CHECK-LABEL: func.func @rows
// CHECK:       linalg.generic {indexing_maps = [#[[IN:.*]], #[[OUT:.*]]], iterator_types = ["parallel", "reduction"]}
#rows_in = affine_map<(i, j) -> (i, j)>
#rows_out = affine_map<(i, j) -> (j)>
func.func @rows(%g: tensor<64x8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [#rows_in, #rows_out], iterator_types = ["reduction", "parallel"]}
      ins(%g : tensor<64x8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A sum to a scalar (a squared norm) is split: each of the 64 rows into a
// partial sum started at 0, then the 64 partial sums into the result, which
// keeps its initial value (a norm accumulated over several gradients).
// CHECK-LABEL: func.func @norm(
// CHECK-SAME:    %[[G:.*]]: tensor<64x32xf32>, %[[INIT:.*]]: tensor<f64>)
// CHECK-DAG:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-DAG:   %[[EMPTY:.*]] = tensor.empty() : tensor<64xf64>
// CHECK:       %[[FILL:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%[[EMPTY]] : tensor<64xf64>)
// CHECK:       %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[G]] : tensor<64x32xf32>) outs(%[[FILL]] : tensor<64xf64>)
// CHECK:         arith.mulf
// CHECK:       %[[TOTAL:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PARTIAL]] : tensor<64xf64>) outs(%[[INIT]] : tensor<f64>)
// CHECK:         arith.addf
// CHECK:       return %[[TOTAL]]
#norm_in = affine_map<(i, j) -> (i, j)>
#norm_out = affine_map<(i, j) -> ()>
func.func @norm(%g: tensor<64x32xf32>, %init: tensor<f64>) -> tensor<f64> {
  %r = linalg.generic {indexing_maps = [#norm_in, #norm_out], iterator_types = ["reduction", "reduction"]}
      ins(%g : tensor<64x32xf32>) outs(%init : tensor<f64>) {
  ^bb0(%x: f32, %acc: f64):
    %e = arith.extf %x : f32 to f64
    %sq = arith.mulf %e, %e : f64
    %s = arith.addf %acc, %sq : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %r : tensor<f64>
}

// -----

// Too few rows to pay for a second reduction, or no sum, maximum or
// minimum: left alone.
// CHECK-LABEL: func.func @small
// CHECK:       linalg.generic
// CHECK-NOT:   linalg.generic
#small_in = affine_map<(i) -> (i)>
#small_out = affine_map<(i) -> ()>
func.func @small(%g: tensor<8xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#small_in, #small_out], iterator_types = ["reduction"]}
      ins(%g : tensor<8xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maximumf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// A channel's sum over N, H and W of an NHWC tensor. Reordered (the
// default), a thread per channel reads with the stride of a row; with
// split-columns (the CPU), a partial row per image, read along memory with
// the loops in their order, then the 16 rows summed into the result.
// CHECK-LABEL: func.func @channels(
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
// COLUMNS-LABEL: func.func @channels(
// COLUMNS-SAME:    %[[X:.*]]: tensor<16x4x4x64xf32>, %[[INIT:.*]]: tensor<64xf64>)
// COLUMNS:       %[[FILL:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%{{.*}} : tensor<16x64xf64>)
// COLUMNS:       %[[PARTIAL:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[ROW:.*]]], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%[[X]] : tensor<16x4x4x64xf32>) outs(%[[FILL]] : tensor<16x64xf64>)
// COLUMNS:       %[[TOTAL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[PARTIAL]] : tensor<16x64xf64>) outs(%[[INIT]] : tensor<64xf64>)
// COLUMNS:       return %[[TOTAL]]
// A matrix's column sums (each partial row would sum one row) are
// reordered as before.
// COLUMNS-LABEL: func.func @matrix_columns(
// COLUMNS:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// COLUMNS-NOT:   linalg.generic
#nhwc = affine_map<(n, h, w, c) -> (n, h, w, c)>
#channel = affine_map<(n, h, w, c) -> (c)>
func.func @channels(%x: tensor<16x4x4x64xf32>, %init: tensor<64xf64>) -> tensor<64xf64> {
  %r = linalg.generic {indexing_maps = [#nhwc, #channel], iterator_types = ["reduction", "reduction", "reduction", "parallel"]}
      ins(%x : tensor<16x4x4x64xf32>) outs(%init : tensor<64xf64>) {
  ^bb0(%v: f32, %acc: f64):
    %e = arith.extf %v : f32 to f64
    %s = arith.addf %e, %acc : f64
    linalg.yield %s : f64
  } -> tensor<64xf64>
  return %r : tensor<64xf64>
}
#few_in = affine_map<(i, j) -> (i, j)>
#few_out = affine_map<(i, j) -> (j)>
func.func @matrix_columns(%g: tensor<64x8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [#few_in, #few_out], iterator_types = ["reduction", "parallel"]}
      ins(%g : tensor<64x8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}
