// RUN: sinter-opt %s -sinter-fuse-elementwise="recompute-cheap-maps=1" -split-input-file | FileCheck %s
// RUN: sinter-opt %s -sinter-fuse-elementwise -split-input-file | FileCheck %s --check-prefix=OFF

// Without the option (the CPU target), the map is stored and read.
// OFF-LABEL: func.func @recomputed(
// OFF:       %[[XC:.*]] = linalg.generic
// OFF:         arith.subf
// OFF:       linalg.generic {{.*}}ins(%{{.*}}, %[[XC]] :
// OFF:       linalg.generic {{.*}}ins(%[[XC]] :

// A map of one large tensor and broadcasts (x - mean, as layer norm's
// backward pass has it), read element by element by several loops, is
// computed again in each: a sum down the columns of dy * (x - mean) (a
// scale's gradient) and a sum along the rows read x and the mean, and
// x - mean is never stored.
// CHECK-LABEL: func.func @recomputed(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[M:[a-z0-9]+]]: tensor<4x1xf32>, %[[DY:[a-z0-9]+]]: tensor<4x8xf32>
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[DY]], %[[X]], %[[M]] :
// CHECK:         arith.subf
// CHECK:         arith.mulf
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]], %[[M]] :
// CHECK:         arith.subf
// CHECK-NOT:   linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#colT = affine_map<(d0, d1) -> (d1, d0)>
#out0 = affine_map<(d0, d1) -> (d0)>
func.func @recomputed(%x: tensor<4x8xf32>, %m: tensor<4x1xf32>, %dy: tensor<4x8xf32>,
                      %a: tensor<8xf32>, %b: tensor<4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %xc = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.subf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#colT, #colT, #out0], iterator_types = ["parallel", "reduction"]}
      ins(%dy, %xc : tensor<4x8xf32>, tensor<4x8xf32>) outs(%a : tensor<8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.mulf %p, %q : f32
    %t = arith.addf %o, %s : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #out0], iterator_types = ["parallel", "reduction"]}
      ins(%xc : tensor<4x8xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%q: f32, %o: f32):
    %t = arith.addf %o, %q : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %g, %r : tensor<8xf32>, tensor<4xf32>
}

// -----

// What is not computed again: a value also returned (kept for the backward
// pass: the loop that reads it writes it too), and a matmul's product plus
// a bias (one loop reads the sum, so that sinter-matmul-bias can give the
// add to the library, which adds the bias as it writes the product).
// CHECK-LABEL: func.func @kept_or_biased(
// CHECK:       %[[XC:.*]]:2 = linalg.generic
// CHECK:         arith.subf
// CHECK:         math.exp
// CHECK:       %[[MM:.*]] = linalg.matmul
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%[[MM]], %{{.*}} : tensor<4x3xf32>, tensor<3xf32>)
// CHECK:         %[[H:.*]] = arith.addf
// CHECK:         math.tanh %[[H]]
// CHECK:         math.exp %[[H]]
// CHECK-NOT:   linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @kept_or_biased(%x: tensor<4x8xf32>, %m: tensor<4x1xf32>, %w: tensor<8x3xf32>,
                          %b: tensor<3xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %xc = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x8xf32>, tensor<4x1xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.subf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xc : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.exp %p : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e3 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h = linalg.generic {indexing_maps = [#id, #bias, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<4x3xf32>, tensor<3xf32>) outs(%e3 : tensor<4x3xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x3xf32>) outs(%e3 : tensor<4x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.tanh %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x3xf32>) outs(%e3 : tensor<4x3xf32>) {
  ^bb0(%p: f32, %o: f32):
    %s = math.exp %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %xc, %ex, %t, %u : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

