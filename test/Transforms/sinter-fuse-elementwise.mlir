// RUN: sinter-opt %s -sinter-fuse-elementwise -split-input-file | FileCheck %s

// A transpose and a broadcast feed an add, whose sum feeds a relu: the four
// maps become one loop nest that reads the arguments through the producers'
// maps, so no intermediate tensor is left to allocate.
// CHECK-DAG:   #[[ID:[a-z0-9_]+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[T:[a-z0-9_]+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG:   #[[ROW:[a-z0-9_]+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<8x4xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>)
// CHECK:       %[[R:.*]] = linalg.generic {indexing_maps = [#[[T]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:    ins(%[[X]], %[[B]] : tensor<8x4xf32>, tensor<8xf32>)
// CHECK:         %[[S:.*]] = arith.addf
// CHECK-NEXT:    %[[M:.*]] = arith.maximumf %[[S]]
// CHECK-NEXT:    linalg.yield %[[M]] : f32
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R]] : tensor<4x8xf32>
#id = affine_map<(i, j) -> (i, j)>
#tr = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (j)>
func.func @chain(%x: tensor<8x4xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  %xt = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x4xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %bb = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%xt, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%l: f32, %r: f32, %out: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  return %relu : tensor<4x8xf32>
}

// -----

// A map that only a reduction reads, element by element, joins it: the sum
// computes each exp once, and no tensor of them is stored.
// CHECK-LABEL: func.func @into_reduction(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK:       %[[SUM:.*]] = linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "reduction"]
// CHECK-SAME:    ins(%[[X]] : tensor<4x8xf32>)
// CHECK:         math.exp
// CHECK:         arith.addf
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[SUM]]
#id = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>
func.func @into_reduction(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

// A reduction that reads a map's value once per reduced element (a row's
// exp, broadcast along the summed axis) would compute it again for each of
// them: the map stays a loop of its own.
// CHECK-LABEL: func.func @broadcast_into_reduction(
// CHECK:       %[[E:.*]] = linalg.generic
// CHECK-SAME:    iterator_types = ["parallel"]
// CHECK:         math.exp
// CHECK:       linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "reduction"]
// CHECK-SAME:    ins(%{{.*}}, %[[E]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK-NOT:     math.exp
#id = affine_map<(i, j) -> (i, j)>
#rows = affine_map<(i, j) -> (i)>
#id1 = affine_map<(i) -> (i)>
func.func @broadcast_into_reduction(%x: tensor<4x8xf32>, %r: tensor<4xf32>) -> tensor<4xf32> {
  %init1 = tensor.empty() : tensor<4xf32>
  %e = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%r : tensor<4xf32>) outs(%init1 : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%zero : f32) outs(%init1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rows, #rows], iterator_types = ["parallel", "reduction"]}
      ins(%x, %e : tensor<4x8xf32>, tensor<4xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %p = arith.mulf %in, %s : f32
    %a = arith.addf %p, %out : f32
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

// A value kept for later (h, returned beside g = tanh(h)) is written by the
// loop that computes its consumer: one loop yields both, and h is computed
// once and never read back.
// CHECK-LABEL: func.func @kept_value(
// CHECK:       %[[R:.*]]:2 = linalg.generic
// CHECK:         %[[H:.*]] = arith.addf
// CHECK-NEXT:    %[[G:.*]] = math.tanh %[[H]]
// CHECK-NEXT:    linalg.yield %[[H]], %[[G]] : f32, f32
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R]]#0, %[[R]]#1
#id2 = affine_map<(i, j) -> (i, j)>
#row2 = affine_map<(i, j) -> (j)>
func.func @kept_value(%x: tensor<4x8xf32>, %b: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %init = tensor.empty() : tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%l: f32, %r: f32, %out: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %h, %g : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A value that a reduction reads before the map does stays a loop of its
// own: a fused loop in the map's place would come after the reduction.
// CHECK-LABEL: func.func @used_before(
// CHECK:       %[[H:.*]] = linalg.generic
// CHECK:         arith.addf
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[H]]
// CHECK:       linalg.generic {{.*}}ins(%[[H]]
// CHECK:         math.tanh
#id2 = affine_map<(i, j) -> (i, j)>
#row2 = affine_map<(i, j) -> (j)>
#col2 = affine_map<(i, j) -> (i)>
func.func @used_before(%x: tensor<4x8xf32>, %b: tensor<8xf32>)
    -> (tensor<4xf32>, tensor<4x8xf32>) {
  %init = tensor.empty() : tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#id2, #row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%l: f32, %r: f32, %out: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #col2], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %g = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %sum, %g : tensor<4xf32>, tensor<4x8xf32>
}

// -----

// Nor into a contraction: the matmul must stay a named op, which the CPU
// target hands to the runtime's library, and read the relu's result.
// CHECK-LABEL: func.func @into_matmul(
// CHECK:       %[[RELU:.*]] = linalg.generic
// CHECK:         arith.maximumf
// CHECK:       %[[MM:.*]] = linalg.matmul ins(%[[RELU]], %{{.*}} : tensor<4x8xf32>, tensor<8x3xf32>)
// CHECK:       return %[[MM]]
#id = affine_map<(i, j) -> (i, j)>
func.func @into_matmul(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<4x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %mm = linalg.matmul ins(%relu, %w : tensor<4x8xf32>, tensor<8x3xf32>)
                      outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %mm : tensor<4x3xf32>
}

// -----

// A residual stream: each sum is used by the next sum and by a tanh. A sum
// that feeds two maps is computed once, not once in each of them; copied
// into every user, the sums would nest, and the IR would grow with the
// square of the number of layers. Here one loop computes the four sums and
// yields the three values returned.
// CHECK-LABEL: func.func @residual_stream(
// CHECK:         linalg.generic
// CHECK-COUNT-4: arith.addf
// CHECK-NOT:     arith.addf
// CHECK:         linalg.yield %{{.*}}, %{{.*}}, %{{.*}} : f32, f32, f32
// CHECK-NOT:   linalg.generic
#id1 = affine_map<(i) -> (i)>
func.func @residual_stream(%x: tensor<16xf32>, %y: tensor<16xf32>)
    -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %init = tensor.empty() : tensor<16xf32>
  %s1 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<16xf32>, tensor<16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %t1 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%s1 : tensor<16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  %s2 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%s1, %y : tensor<16xf32>, tensor<16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %t2 = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%s2 : tensor<16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<16xf32>
  %s3 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%s2, %y : tensor<16xf32>, tensor<16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %s4 = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%s3, %y : tensor<16xf32>, tensor<16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %t1, %t2, %s4 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// A broadcast feeds two maps: it only moves data, so each map reads the
// row through the broadcast's map and no broadcast tensor is left.
// CHECK-LABEL: func.func @shared_broadcast(
// CHECK-COUNT-2: linalg.generic {{.*}}ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8xf32>)
// CHECK-NOT:     linalg.generic
#id2 = affine_map<(i, j) -> (i, j)>
#row2 = affine_map<(i, j) -> (j)>
func.func @shared_broadcast(%x: tensor<4x8xf32>, %b: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %init = tensor.empty() : tensor<4x8xf32>
  %bb = linalg.generic {indexing_maps = [#row2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%l: f32, %r: f32, %out: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %prod = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%l: f32, %r: f32, %out: f32):
    %p = arith.mulf %l, %r : f32
    linalg.yield %p : f32
  } -> tensor<4x8xf32>
  return %sum, %prod : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A transpose only moves data: splitting attention's heads and rounding
// them to bf16 is one loop that reads the projection through the
// transpose's map. A transpose a matmul reads stays named (the library
// reads it in place).
// CHECK-DAG:   #[[HEADS:[a-z0-9_]+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func.func @split_heads(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<2x8x4x16xf32>, %[[W:[a-z0-9]+]]: tensor<6x4xf32>, %[[V:[a-z0-9]+]]: tensor<8x4xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[HEADS]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:    ins(%[[X]] : tensor<2x8x4x16xf32>) outs(%{{.*}} : tensor<2x4x8x16xbf16>)
// CHECK:         arith.truncf
// CHECK:       %[[WT:.*]] = linalg.transpose ins(%[[W]] : tensor<6x4xf32>)
// CHECK:       linalg.matmul ins(%[[V]], %[[WT]]
#id4 = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @split_heads(%x: tensor<2x8x4x16xf32>, %w: tensor<6x4xf32>, %v: tensor<8x4xf32>)
    -> (tensor<2x4x8x16xbf16>, tensor<8x6xf32>) {
  %e = tensor.empty() : tensor<2x4x8x16xf32>
  %t = linalg.transpose ins(%x : tensor<2x8x4x16xf32>) outs(%e : tensor<2x4x8x16xf32>)
      permutation = [0, 2, 1, 3]
  %e16 = tensor.empty() : tensor<2x4x8x16xbf16>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<2x4x8x16xf32>) outs(%e16 : tensor<2x4x8x16xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %h = arith.truncf %in : f32 to bf16
    linalg.yield %h : bf16
  } -> tensor<2x4x8x16xbf16>
  %ew = tensor.empty() : tensor<4x6xf32>
  %wt = linalg.transpose ins(%w : tensor<6x4xf32>) outs(%ew : tensor<4x6xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %em = tensor.empty() : tensor<8x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%em : tensor<8x6xf32>) -> tensor<8x6xf32>
  %mm = linalg.matmul ins(%v, %wt : tensor<8x4xf32>, tensor<4x6xf32>)
                      outs(%acc : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %r, %mm : tensor<2x4x8x16xbf16>, tensor<8x6xf32>
}

// -----

// A row's statistic made as [rows] and read as [rows, 1] (a mean, then its
// reciprocal square root): the reader reads it through the unit reshape's
// source, and the two loops become one.
// CHECK-LABEL: func.func @through_unit_reshape(
// CHECK-SAME:    %[[S:[^:]*]]: tensor<4xf64>)
// CHECK-NOT:   tensor.expand_shape
// CHECK:       %[[R:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[S]] : tensor<4xf64>) outs(%{{.*}} : tensor<4x1xf32>)
// CHECK:         arith.truncf
// CHECK:         math.rsqrt
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R]]
func.func @through_unit_reshape(%s: tensor<4xf64>) -> tensor<4x1xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf64>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f64, %o: f32):
    %t = arith.truncf %in : f64 to f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %x = tensor.expand_shape %m [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %e2 = tensor.empty() : tensor<4x1xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x1xf32>) outs(%e2 : tensor<4x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %q = math.rsqrt %in : f32
    linalg.yield %q : f32
  } -> tensor<4x1xf32>
  return %r : tensor<4x1xf32>
}

// -----

// A reduction over the unit dimension, which only the reshaped input
// indexes: read through the source, that loop would have no range. It
// stays reading the reshape.
// CHECK-LABEL: func.func @unit_loop_only_there(
// CHECK:       tensor.expand_shape
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<4x1xf32>)
func.func @unit_loop_only_there(%m: tensor<4xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %x = tensor.expand_shape %m [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x1xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A matmul's product with a unit batch dimension added stays read through
// the reshape, at the identity map, where sinter-matmul-bias finds it.
// CHECK-LABEL: func.func @unit_batch_product(
// CHECK:       %[[P:.*]] = linalg.matmul
// CHECK:       %[[X:.*]] = tensor.expand_shape %[[P]]
// CHECK:       linalg.generic {{.*}} ins(%[[X]], %{{.*}} : tensor<1x64x48xf32>, tensor<48xf32>)
func.func @unit_batch_product(%a: tensor<64x32xf32>, %w: tensor<32x48xf32>, %bias: tensor<48xf32>) -> tensor<1x64x48xf32> {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<64x48xf32>
  %zeros = linalg.fill ins(%z : f32) outs(%e0 : tensor<64x48xf32>) -> tensor<64x48xf32>
  %p = linalg.matmul ins(%a, %w : tensor<64x32xf32>, tensor<32x48xf32>) outs(%zeros : tensor<64x48xf32>) -> tensor<64x48xf32>
  %x = tensor.expand_shape %p [[0, 1], [2]] output_shape [1, 64, 48] : tensor<64x48xf32> into tensor<1x64x48xf32>
  %e = tensor.empty() : tensor<1x64x48xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %bias : tensor<1x64x48xf32>, tensor<48xf32>) outs(%e : tensor<1x64x48xf32>) {
  ^bb0(%in: f32, %b: f32, %o: f32):
    %s = arith.addf %in, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x64x48xf32>
  return %r : tensor<1x64x48xf32>
}
