// RUN: sinter-opt %s -sinter-accumulate-products -split-input-file | FileCheck %s

// A gradient accumulated over micro-batches, acc + x^T · dy: the product is
// made onto the accumulator itself, keeping its form (A read transposed),
// and the fill, the temporary and the add are gone.
// CHECK-LABEL: func.func @accumulate(
// CHECK-SAME:    %[[X:.*]]: tensor<8x4xf32>, %[[DY:.*]]: tensor<8x5xf32>, %[[ACC:.*]]: tensor<4x5xf32>)
// CHECK-NOT:   linalg.fill
// CHECK-NOT:   linalg.generic
// CHECK:       %[[R:.*]] = linalg.matmul indexing_maps = [#[[A:.*]], #{{.*}}, #{{.*}}] ins(%[[X]], %[[DY]] : tensor<8x4xf32>, tensor<8x5xf32>) outs(%[[ACC]] : tensor<4x5xf32>)
// CHECK:       return %[[R]]
#ta = affine_map<(m, n, k) -> (k, m)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
func.func @accumulate(%x: tensor<8x4xf32>, %dy: tensor<8x5xf32>, %acc: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul indexing_maps = [#ta, #b, #c] ins(%x, %dy : tensor<8x4xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// The product is read elsewhere too: the add stays.
// CHECK-LABEL: func.func @product_used_twice
// CHECK:       linalg.matmul
// CHECK:       linalg.generic
func.func @product_used_twice(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %acc: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r, %g : tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

// A product onto ones is not a plain product: the add stays.
// CHECK-LABEL: func.func @onto_ones
// CHECK:       linalg.matmul
// CHECK:       linalg.generic
func.func @onto_ones(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %acc: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%one : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// Two products from one fill of zeros each get their own, just before them.
// CHECK-LABEL: func.func @shared_zeros
// CHECK:       %[[Z1:.*]] = linalg.fill
// CHECK-NEXT:  linalg.matmul {{.*}} outs(%[[Z1]]
// CHECK-NEXT:  %[[Z2:.*]] = linalg.fill
// CHECK-NEXT:  linalg.matmul {{.*}} outs(%[[Z2]]
func.func @shared_zeros(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %c: tensor<8x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %h = linalg.matmul ins(%a, %c : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %g, %h : tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

// A block's backward function returns a weight's gradient, and both of its
// callers add it to their accumulator: the function takes the accumulator
// as a new last argument and makes the product onto it; the callers pass
// theirs and their adds are gone. The other result is left as it was.
// CHECK-LABEL: func.func private @block_bwd(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<8x4xf32>, %[[DY:[^:]*]]: tensor<8x5xf32>, %[[ACC:[^:]*]]: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<8x5xf32>)
// CHECK-NOT:   linalg.fill
// CHECK:       %[[G:.*]] = linalg.matmul {{.*}} ins(%[[X]], %[[DY]] : {{.*}}) outs(%[[ACC]] : tensor<4x5xf32>)
// CHECK:       return %[[G]], %[[DY]]
// CHECK-LABEL: func.func @two_callers(
// CHECK-SAME:    %[[ACC0:[^:]*]]: tensor<4x5xf32>)
// CHECK-NOT:   linalg.generic
// CHECK:       %[[R1:.*]]:2 = call @block_bwd(%{{.*}}, %{{.*}}, %[[ACC0]])
// CHECK:       %[[R2:.*]]:2 = call @block_bwd(%{{.*}}, %[[R1]]#1, %[[R1]]#0)
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R2]]#0
#ta2 = affine_map<(m, n, k) -> (k, m)>
#b2 = affine_map<(m, n, k) -> (k, n)>
#c2 = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(i, j) -> (i, j)>
func.func private @block_bwd(%x: tensor<8x4xf32>, %dy: tensor<8x5xf32>) -> (tensor<4x5xf32>, tensor<8x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul indexing_maps = [#ta2, #b2, #c2] ins(%x, %dy : tensor<8x4xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %g, %dy : tensor<4x5xf32>, tensor<8x5xf32>
}
func.func @two_callers(%x: tensor<8x4xf32>, %dy: tensor<8x5xf32>, %acc: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r1:2 = call @block_bwd(%x, %dy) : (tensor<8x4xf32>, tensor<8x5xf32>) -> (tensor<4x5xf32>, tensor<8x5xf32>)
  %a1 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%r1#0 : tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  %r2:2 = call @block_bwd(%x, %r1#1) : (tensor<8x4xf32>, tensor<8x5xf32>) -> (tensor<4x5xf32>, tensor<8x5xf32>)
  %a2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%r2#0 : tensor<4x5xf32>) outs(%a1 : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %a2 : tensor<4x5xf32>
}

// -----

// One caller uses the product as it is: the function keeps returning it.
// CHECK-LABEL: func.func private @used_plain(
// CHECK-SAME:    -> tensor<4x5xf32>
// CHECK:       linalg.fill
// CHECK-LABEL: func.func @one_adds_one_does_not(
// CHECK:       call @used_plain(%{{[^,]*}}, %{{[^,]*}})
// CHECK:       linalg.generic
func.func private @used_plain(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %g : tensor<4x5xf32>
}
func.func @one_adds_one_does_not(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %acc: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %g1 = call @used_plain(%a, %b) : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g1 : tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  %g2 = call @used_plain(%a, %b) : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  return %r, %g2 : tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

// The accumulator is made after the call: it cannot be passed to it.
// CHECK-LABEL: func.func private @late_acc(
// CHECK-SAME:    -> tensor<4x5xf32>
// CHECK-LABEL: func.func @accumulator_after_call(
// CHECK:       call @late_acc(%{{[^,]*}}, %{{[^,]*}})
// CHECK:       linalg.generic
func.func private @late_acc(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %g : tensor<4x5xf32>
}
func.func @accumulator_after_call(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> tensor<4x5xf32> {
  %g = call @late_acc(%a, %b) : (tensor<4x8xf32>, tensor<8x5xf32>) -> tensor<4x5xf32>
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %acc = linalg.fill ins(%one : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// A tied weight's gradient, acc + (product + scatter): the product is made
// onto acc where it was, the scatter adds its rows into that, and the copy
// of zeros and the three-array sum are gone.
// CHECK-LABEL: func.func @tied(
// CHECK-SAME:    %[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<8x5xf32>, %[[IDS:[^:]*]]: tensor<3xi32>, %[[ROWS:[^:]*]]: tensor<3x5xf32>, %[[ACC:[^:]*]]: tensor<4x5xf32>)
// CHECK-NOT:   linalg.fill
// CHECK:       %[[P:.*]] = linalg.matmul ins(%[[A]], %[[B]] : {{.*}}) outs(%[[ACC]] : tensor<4x5xf32>)
// CHECK:       %[[S:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[P]]) -> (tensor<4x5xf32>)
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[S]]
func.func @tied(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %ids: tensor<3xi32>, %rows: tensor<3x5xf32>, %acc: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%t = %z) -> (tensor<4x5xf32>) {
    %id = tensor.extract %ids[%i] : tensor<3xi32>
    %row = arith.index_cast %id : i32 to index
    %u = scf.for %j = %c0 to %c5 step %c1 iter_args(%v = %t) -> (tensor<4x5xf32>) {
      %x = tensor.extract %rows[%i, %j] : tensor<3x5xf32>
      %old = tensor.extract %v[%row, %j] : tensor<4x5xf32>
      %new = arith.addf %old, %x : f32
      %w = tensor.insert %new into %v[%row, %j] : tensor<4x5xf32>
      scf.yield %w : tensor<4x5xf32>
    }
    scf.yield %u : tensor<4x5xf32>
  }
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g, %s : tensor<4x5xf32>, tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %pq = arith.addf %p, %q : f32
    %sum = arith.addf %out, %pq : f32
    linalg.yield %sum : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// The sum has a third input: the product leaves the sum, which adds the
// rest to it.
// CHECK-LABEL: func.func @product_and_two_more(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<4x5xf32>, %[[Y:[^:]*]]: tensor<4x5xf32>, %[[ACC:[^:]*]]: tensor<4x5xf32>,
// CHECK:       %[[P:.*]] = linalg.matmul ins({{.*}}) outs(%[[ACC]] : tensor<4x5xf32>)
// CHECK:       %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[Y]] : tensor<4x5xf32>, tensor<4x5xf32>) outs(%[[P]] : tensor<4x5xf32>)
// CHECK:       ^bb0(%[[IX:[^:]*]]: f32, %[[IY:[^:]*]]: f32, %[[OUT:[^:]*]]: f32):
// CHECK:         %[[XY:.*]] = arith.addf %[[IX]], %[[IY]]
// CHECK:         arith.addf %[[OUT]], %[[XY]]
// CHECK:       return %[[R]]
func.func @product_and_two_more(%x: tensor<4x5xf32>, %y: tensor<4x5xf32>, %acc: tensor<4x5xf32>, %a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %g = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%z : tensor<4x5xf32>) -> tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %g, %y : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%p: f32, %q: f32, %s: f32, %out: f32):
    %pq = arith.addf %p, %q : f32
    %pqs = arith.addf %pq, %s : f32
    %sum = arith.addf %out, %pqs : f32
    linalg.yield %sum : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}

// -----

// A loop that writes its tensor rather than adding into it: started from
// acc it would not give acc plus its rows, so the add stays.
// CHECK-LABEL: func.func @scatter_that_overwrites(
// CHECK:       scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<4x5xf32>)
// CHECK:       tensor.insert %{{.*}} into
// CHECK:       linalg.generic
func.func @scatter_that_overwrites(%ids: tensor<3xi32>, %rows: tensor<3x5xf32>, %acc: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %e = tensor.empty() : tensor<4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  %s = scf.for %i = %c0 to %c3 step %c1 iter_args(%t = %z) -> (tensor<4x5xf32>) {
    %id = tensor.extract %ids[%i] : tensor<3xi32>
    %row = arith.index_cast %id : i32 to index
    %u = scf.for %j = %c0 to %c5 step %c1 iter_args(%v = %t) -> (tensor<4x5xf32>) {
      %x = tensor.extract %rows[%i, %j] : tensor<3x5xf32>
      %w = tensor.insert %x into %v[%row, %j] : tensor<4x5xf32>
      scf.yield %w : tensor<4x5xf32>
    }
    scf.yield %u : tensor<4x5xf32>
  }
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x5xf32>) outs(%acc : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sum = arith.addf %out, %in : f32
    linalg.yield %sum : f32
  } -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}
