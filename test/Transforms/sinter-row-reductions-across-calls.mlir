// RUN: sinter-opt %s -sinter-row-reductions-across-calls -split-input-file | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A layer sums the rows of its input, the previous layer's output, and a
// final norm sums the last layer's. The layer takes its input's sums as an
// argument and returns its output's, made after the loop that wrote it;
// the first layer's are made next to the loop that made its input, and the
// final norm reads the last call's.
// CHECK-LABEL: func.func private @layer(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x64xf32>, %[[S:[^:]*]]: tensor<4xf64>) -> (tensor<4x64xf32>, tensor<4xf64>)
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %[[S]] :
// CHECK:         %[[OUT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK:         %[[SUMS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[OUT]] :
// CHECK:         return %[[OUT]], %[[SUMS]]
// CHECK-LABEL: func.func @model(
// CHECK:         %[[E:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK:         %[[ES:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[E]] :
// CHECK:         %[[C1:.*]]:2 = call @layer(%[[E]], %[[ES]])
// CHECK:         %[[C2:.*]]:2 = call @layer(%[[C1]]#0, %[[C1]]#1)
// CHECK-NOT:     iterator_types = ["parallel", "reduction"]
// CHECK:         return %[[C2]]#0, %[[C2]]#1
func.func private @layer(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f64
  %re = tensor.empty() : tensor<4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%re : tensor<4xf64>) -> tensor<4xf64>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%z : tensor<4xf64>) {
  ^bb0(%v: f32, %acc: f64):
    %w = arith.extf %v : f32 to f64
    %n = arith.addf %acc, %w : f64
    linalg.yield %n : f64
  } -> tensor<4xf64>
  %e = tensor.empty() : tensor<4x64xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<4x64xf32>, tensor<4xf64>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %m: f64, %o: f32):
    %t = arith.truncf %m : f64 to f32
    %u = arith.subf %v, %t : f32
    linalg.yield %u : f32
  } -> tensor<4x64xf32>
  %out = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x64xf32>
  return %out : tensor<4x64xf32>
}
func.func @model(%a: tensor<4x64xf32>, %b: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4xf64>) {
  %e0 = tensor.empty() : tensor<4x64xf32>
  %e = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e0 : tensor<4x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<4x64xf32>
  %1 = call @layer(%e) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %2 = call @layer(%1) : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %zero = arith.constant 0.0 : f64
  %re = tensor.empty() : tensor<4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%re : tensor<4xf64>) -> tensor<4xf64>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%2 : tensor<4x64xf32>) outs(%z : tensor<4xf64>) {
  ^bb0(%v: f32, %acc: f64):
    %w = arith.extf %v : f32 to f64
    %n = arith.addf %acc, %w : f64
    linalg.yield %n : f64
  } -> tensor<4xf64>
  return %2, %s : tensor<4x64xf32>, tensor<4xf64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// The caller passes its own argument, which no loop of its makes: the
// sums stay in the function.
// CHECK-LABEL: func.func private @takes_argument(
// CHECK-SAME:    %{{[^:]*}}: tensor<4x64xf32>) -> tensor<4xf64>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
func.func private @takes_argument(%x: tensor<4x64xf32>) -> tensor<4xf64> {
  %zero = arith.constant 0.0 : f64
  %re = tensor.empty() : tensor<4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%re : tensor<4xf64>) -> tensor<4xf64>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%z : tensor<4xf64>) {
  ^bb0(%v: f32, %acc: f64):
    %w = arith.extf %v : f32 to f64
    %n = arith.addf %acc, %w : f64
    linalg.yield %n : f64
  } -> tensor<4xf64>
  return %s : tensor<4xf64>
}
func.func @passes_argument(%a: tensor<4x64xf32>) -> tensor<4xf64> {
  %s = call @takes_argument(%a) : (tensor<4x64xf32>) -> tensor<4xf64>
  return %s : tensor<4xf64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
#out = affine_map<(d0, d1) -> (d0)>

// A sum down the columns (a bias gradient) is no row reduction: it stays.
// CHECK-LABEL: func.func private @column_sum(
// CHECK-SAME:    %{{[^:]*}}: tensor<64x8xf32>) -> tensor<8xf64>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
func.func private @column_sum(%x: tensor<64x8xf32>) -> tensor<8xf64> {
  %zero = arith.constant 0.0 : f64
  %re = tensor.empty() : tensor<8xf64>
  %z = linalg.fill ins(%zero : f64) outs(%re : tensor<8xf64>) -> tensor<8xf64>
  %s = linalg.generic {indexing_maps = [#t, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x8xf32>) outs(%z : tensor<8xf64>) {
  ^bb0(%v: f32, %acc: f64):
    %w = arith.extf %v : f32 to f64
    %n = arith.addf %acc, %w : f64
    linalg.yield %n : f64
  } -> tensor<8xf64>
  return %s : tensor<8xf64>
}
func.func @calls_column_sum(%a: tensor<64x8xf32>, %b: tensor<64x8xf32>) -> tensor<8xf64> {
  %e0 = tensor.empty() : tensor<64x8xf32>
  %e = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<64x8xf32>, tensor<64x8xf32>) outs(%e0 : tensor<64x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %r = arith.addf %p, %q : f32
    linalg.yield %r : f32
  } -> tensor<64x8xf32>
  %s = call @column_sum(%e) : (tensor<64x8xf32>) -> tensor<8xf64>
  return %s : tensor<8xf64>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A reduction whose body reads a constant from outside it moves with a
// copy of the constant; one that reads the function's other argument
// stays.
// CHECK-LABEL: func.func private @scaled(
// CHECK-SAME:    %{{[^:]*}}: tensor<4x64xf32>, %[[K:[^:]*]]: f32) -> (tensor<4x64xf32>, tensor<4xf32>)
// CHECK:         arith.mulf %{{.*}}, %[[K]]
// CHECK:         %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// CHECK:           arith.mulf %{{.*}}, %[[HALF]]
// CHECK:         return
// CHECK-LABEL: func.func @calls_scaled(
// CHECK-NOT:     iterator_types = ["parallel", "reduction"]
// CHECK:         return
func.func private @scaled(%x: tensor<4x64xf32>, %k: f32) -> tensor<4x64xf32> {
  %e = tensor.empty() : tensor<4x64xf32>
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x64xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %w = arith.mulf %v, %k : f32
    %n = arith.addf %acc, %w : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<4x64xf32>, tensor<4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %m: f32, %o: f32):
    %u = arith.mulf %v, %k : f32
    %t = arith.subf %u, %m : f32
    linalg.yield %t : f32
  } -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}
func.func @calls_scaled(%a: tensor<4x64xf32>, %k: f32) -> tensor<4xf32> {
  %e0 = tensor.empty() : tensor<4x64xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x64xf32>) outs(%e0 : tensor<4x64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = arith.addf %p, %p : f32
    linalg.yield %r : f32
  } -> tensor<4x64xf32>
  %1 = call @scaled(%e, %k) : (tensor<4x64xf32>, f32) -> tensor<4x64xf32>
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%re : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%1 : tensor<4x64xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %w = arith.mulf %v, %half : f32
    %n = arith.addf %acc, %w : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}
