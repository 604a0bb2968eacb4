// RUN: sinter-opt %s -sinter-cuda-fuse-into-row-reductions -split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A residual add, x = a + b, that a row's statistics read and another op
// reads after them: one loop computes x, stores it and folds it, and the
// later reader takes the stored x.
// CHECK-LABEL: func.func @residual_under_statistics(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<4x64xf32>, %[[B:[a-z0-9]+]]: tensor<4x64xf32>
// CHECK:       %[[F:.*]]:3 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[A]], %[[B]] : tensor<4x64xf32>, tensor<4x64xf32>)
// CHECK:         %[[X:.*]] = arith.addf
// CHECK:         arith.mulf
// CHECK:         linalg.yield
// CHECK-NOT:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]]
// CHECK:       linalg.generic {{.*}} ins(%[[F]]#{{[0-9]}}, %[[F]]#{{[0-9]}}
func.func @residual_under_statistics(%a: tensor<4x64xf32>, %b: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x64xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%va: f32, %vb: f32, %o: f32):
    %s = arith.addf %va, %vb : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %re = tensor.empty() : tensor<4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%re : tensor<4xf64>) -> tensor<4xf64>
  %sums:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%z, %z : tensor<4xf64>, tensor<4xf64>) {
  ^bb0(%v: f32, %s1: f64, %s2: f64):
    %w = arith.extf %v : f32 to f64
    %n1 = arith.addf %s1, %w : f64
    %sq = arith.mulf %w, %w : f64
    %n2 = arith.addf %s2, %sq : f64
    linalg.yield %n1, %n2 : f64, f64
  } -> (tensor<4xf64>, tensor<4xf64>)
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sums#0, %sums#1 : tensor<4x64xf32>, tensor<4xf64>, tensor<4xf64>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %m: f64, %q: f64, %o: f32):
    %t = arith.truncf %m : f64 to f32
    %u = arith.subf %v, %t : f32
    linalg.yield %u : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Fewer than 32 elements a row: no block per row, nothing fused.
// CHECK-LABEL: func.func @short_rows(
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
func.func @short_rows(%a: tensor<4x16xf32>, %b: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4xf64>) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x16xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%va: f32, %vb: f32, %o: f32):
    %s = arith.addf %va, %vb : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %re = tensor.empty() : tensor<4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%re : tensor<4xf64>) -> tensor<4xf64>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x16xf32>) outs(%z : tensor<4xf64>) {
  ^bb0(%v: f32, %s1: f64):
    %w = arith.extf %v : f32 to f64
    %n1 = arith.addf %s1, %w : f64
    linalg.yield %n1 : f64
  } -> tensor<4xf64>
  return %x, %sum : tensor<4x16xf32>, tensor<4xf64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>

// A column sum (a bias gradient) is split over rows, not run as a block
// per output: nothing fused.
// CHECK-LABEL: func.func @column_sum(
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
func.func @column_sum(%a: tensor<64x8xf32>, %b: tensor<64x8xf32>) -> (tensor<64x8xf32>, tensor<8xf64>) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<64x8xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<64x8xf32>, tensor<64x8xf32>) outs(%e : tensor<64x8xf32>) {
  ^bb0(%va: f32, %vb: f32, %o: f32):
    %s = arith.addf %va, %vb : f32
    linalg.yield %s : f32
  } -> tensor<64x8xf32>
  %re = tensor.empty() : tensor<8xf64>
  %z = linalg.fill ins(%zero : f64) outs(%re : tensor<8xf64>) -> tensor<8xf64>
  %sum = linalg.generic {indexing_maps = [#t, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x8xf32>) outs(%z : tensor<8xf64>) {
  ^bb0(%v: f32, %s1: f64):
    %w = arith.extf %v : f32 to f64
    %n1 = arith.addf %s1, %w : f64
    linalg.yield %n1 : f64
  } -> tensor<8xf64>
  return %x, %sum : tensor<64x8xf32>, tensor<8xf64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Another op reads x before the statistics: the fused loop could not come
// first, and nothing is fused.
// CHECK-LABEL: func.func @read_before(
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
func.func @read_before(%a: tensor<4x64xf32>, %b: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4xf64>) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x64xf32>
  %x = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%va: f32, %vb: f32, %o: f32):
    %s = arith.addf %va, %vb : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %u = arith.mulf %v, %v : f32
    linalg.yield %u : f32
  } -> tensor<4x64xf32>
  %re = tensor.empty() : tensor<4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%re : tensor<4xf64>) -> tensor<4xf64>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%z : tensor<4xf64>) {
  ^bb0(%v: f32, %s1: f64):
    %w = arith.extf %v : f32 to f64
    %n1 = arith.addf %s1, %w : f64
    linalg.yield %n1 : f64
  } -> tensor<4xf64>
  return %y, %sum : tensor<4x64xf32>, tensor<4xf64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Dynamic rows (no block per row on buffers), and a producer that reads
// its own output (no stored output): nothing fused.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK-LABEL: func.func @producer_reads_output(
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
func.func @dynamic_rows(%a: tensor<?x64xf32>, %b: tensor<?x64xf32>, %z: tensor<?xf32>) -> (tensor<?x64xf32>, tensor<?xf32>) {
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x64xf32>) outs(%b : tensor<?x64xf32>) {
  ^bb0(%va: f32, %o: f32):
    %s = arith.addf %va, %va : f32
    linalg.yield %s : f32
  } -> tensor<?x64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x64xf32>) outs(%z : tensor<?xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.addf %acc, %v : f32
    linalg.yield %n : f32
  } -> tensor<?xf32>
  return %x, %sum : tensor<?x64xf32>, tensor<?xf32>
}
func.func @producer_reads_output(%a: tensor<4x64xf32>, %b: tensor<4x64xf32>, %z: tensor<4xf32>) -> (tensor<4x64xf32>, tensor<4xf32>) {
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x64xf32>) outs(%b : tensor<4x64xf32>) {
  ^bb0(%va: f32, %o: f32):
    %s = arith.addf %va, %o : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %n = arith.addf %acc, %v : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %x, %sum : tensor<4x64xf32>, tensor<4xf32>
}
