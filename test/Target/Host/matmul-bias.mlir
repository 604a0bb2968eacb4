// RUN: sinter-opt %s -sinter-matmul-bias -split-input-file | FileCheck %s

// x·W^T + b through the expand_shape that restores the batch: the product
// starts from b's rows and the loop that added b, now a copy, is gone.
// CHECK-LABEL: func.func @projection(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<8x4xf32>, %[[W:[^:]*]]: tensor<6x4xf32>, %[[B:[^:]*]]: tensor<6xf32>)
// CHECK-NOT:   linalg.fill
// CHECK:       %[[ROWS:.*]] = linalg.broadcast ins(%[[B]] : tensor<6xf32>) outs(%{{.*}} : tensor<8x6xf32>) dimensions = [0]
// CHECK:       %[[P:.*]] = linalg.matmul {{.*}} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ROWS]] : tensor<8x6xf32>)
// CHECK:       %[[E:.*]] = tensor.expand_shape %[[P]]
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[E]]
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id3 = affine_map<(i, j, l) -> (i, j, l)>
#last = affine_map<(i, j, l) -> (l)>
func.func @projection(%x: tensor<8x4xf32>, %w: tensor<6x4xf32>, %b: tensor<6xf32>) -> tensor<2x4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %p = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<8x4xf32>, tensor<6x4xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
  %p3 = tensor.expand_shape %p [[0, 1], [2]] output_shape [2, 4, 6] : tensor<8x6xf32> into tensor<2x4x6xf32>
  %o = tensor.empty() : tensor<2x4x6xf32>
  %y = linalg.generic {indexing_maps = [#id3, #last, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p3, %b : tensor<2x4x6xf32>, tensor<6xf32>) outs(%o : tensor<2x4x6xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<2x4x6xf32>
  return %y : tensor<2x4x6xf32>
}

// -----

// The MLP's first projection: the loop keeps its GELU (here tanh), reads
// the sum, and no longer writes it back: the kept pre-activation is the
// product itself.
// CHECK-LABEL: func.func @activation(
// CHECK:       %[[P:.*]] = linalg.matmul {{.*}} outs(%{{.*}} : tensor<8x6xf32>)
// CHECK:       %[[ACT:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<8x6xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:    %[[T:.*]] = math.tanh %[[IN]]
// CHECK-NEXT:    linalg.yield %[[T]]
// CHECK:       return %[[P]], %[[ACT]]
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @activation(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %b: tensor<6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %p = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
  %r:2 = linalg.generic {indexing_maps = [#id2, #col, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<8x6xf32>, tensor<6xf32>) outs(%e, %e : tensor<8x6xf32>, tensor<8x6xf32>) {
  ^bb0(%in: f32, %bias: f32, %o1: f32, %o2: f32):
    %s = arith.addf %bias, %in : f32
    %t = math.tanh %s : f32
    linalg.yield %s, %t : f32, f32
  } -> (tensor<8x6xf32>, tensor<8x6xf32>)
  return %r#0, %r#1 : tensor<8x6xf32>, tensor<8x6xf32>
}

// -----

// A residual added after the bias: the bias goes into the product, the
// residual's add stays.
// CHECK-LABEL: func.func @residual(
// CHECK:       linalg.broadcast
// CHECK:       %[[P:.*]] = linalg.matmul
// CHECK:       linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<8x6xf32>, tensor<8x6xf32>)
// CHECK:         arith.addf
// CHECK-NOT:     arith.addf
// CHECK:         linalg.yield
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
func.func @residual(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %b: tensor<6xf32>, %h: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %p = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h, %p, %b : tensor<8x6xf32>, tensor<8x6xf32>, tensor<6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%r: f32, %in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %t = arith.addf %r, %s : f32
    linalg.yield %t : f32
  } -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// -----

// Left as they are: a vector along the rows (not a bias of the columns), a
// product read elsewhere too (autodiff kept it), and a product read twice
// in the loop.
// CHECK-LABEL: func.func @not_a_bias(
// CHECK-NOT:   linalg.broadcast
// CHECK:       linalg.fill
// CHECK-LABEL: func.func @product_kept(
// CHECK-NOT:   linalg.broadcast
// CHECK-LABEL: func.func @product_read_twice(
// CHECK-NOT:   linalg.broadcast
#id2 = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#row = affine_map<(i, j) -> (i)>
func.func @not_a_bias(%x: tensor<6x4xf32>, %w: tensor<4x6xf32>, %v: tensor<6xf32>) -> tensor<6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6x6xf32>) -> tensor<6x6xf32>
  %p = linalg.matmul ins(%x, %w : tensor<6x4xf32>, tensor<4x6xf32>) outs(%z : tensor<6x6xf32>) -> tensor<6x6xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %v : tensor<6x6xf32>, tensor<6xf32>) outs(%e : tensor<6x6xf32>) {
  ^bb0(%in: f32, %r: f32, %out: f32):
    %s = arith.addf %in, %r : f32
    linalg.yield %s : f32
  } -> tensor<6x6xf32>
  return %y : tensor<6x6xf32>
}
func.func @product_kept(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %b: tensor<6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %p = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<8x6xf32>, tensor<6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<8x6xf32>
  return %y, %p : tensor<8x6xf32>, tensor<8x6xf32>
}
func.func @product_read_twice(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %b: tensor<6xf32>) -> tensor<8x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %p = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%z : tensor<8x6xf32>) -> tensor<8x6xf32>
  %y = linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : tensor<8x6xf32>, tensor<6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %t = arith.mulf %s, %in : f32
    linalg.yield %t : f32
  } -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}
