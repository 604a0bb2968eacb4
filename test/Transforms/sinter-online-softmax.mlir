// RUN: sinter-opt %s -sinter-online-softmax -split-input-file | FileCheck %s

// Cross-entropy's statistics: the row maximum of the logits, then the f64
// sum of exp(x - max) over the same rows. One generic, marked, in the
// maximum's place, folds each x into both: the maximum as before, the sum
// with one exponential, exp(-|x - m|), rescaling the sum when x raises the
// maximum (then adding exp(0) = 1) and adding it when not; x = -inf adds 0.
// CHECK-LABEL: func.func @statistics(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x300xf32>, %[[M0:[a-z0-9]+]]: tensor<4xf32>
// CHECK:       %[[S0:.*]] = linalg.fill
// CHECK:       %[[R:.*]]:2 = linalg.generic {indexing_maps = [#{{.*}}, #[[ROW:.*]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:    ins(%[[X]] : tensor<4x300xf32>) outs(%[[M0]], %[[S0]] : tensor<4xf32>, tensor<4xf64>)
// CHECK-SAME:    attrs = {sinter.online_softmax}
// CHECK:       ^bb0(%[[V:.*]]: f32, %[[M:.*]]: f32, %[[S:.*]]: f64):
// CHECK:         %[[MAX:.*]] = arith.maximumf %[[M]], %[[V]] : f32
// CHECK:         %[[D:.*]] = arith.subf %[[V]], %[[M]] : f32
// CHECK:         %[[RAISES:.*]] = arith.cmpf ogt, %[[D]]
// CHECK:         %[[A:.*]] = math.absf %[[D]]
// CHECK:         %[[N:.*]] = arith.negf %[[A]]
// CHECK:         %[[E:.*]] = math.exp %[[N]]
// CHECK:         %[[NONE:.*]] = arith.cmpf oeq, %[[V]], %{{.*}}
// CHECK:         %[[E0:.*]] = arith.select %[[NONE]], %{{.*}}, %[[E]]
// CHECK:         %[[W:.*]] = arith.extf %[[E0]] : f32 to f64
// CHECK:         %[[SCALED:.*]] = arith.mulf %[[S]], %[[W]]
// CHECK:         %[[GROWN:.*]] = arith.addf %[[SCALED]], %{{.*}} : f64
// CHECK:         %[[ADDED:.*]] = arith.addf %[[S]], %[[W]]
// CHECK:         %[[NEXT:.*]] = arith.select %[[RAISES]], %[[GROWN]], %[[ADDED]]
// CHECK:         linalg.yield %[[MAX]], %[[NEXT]]
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[R]]#0, %[[R]]#1
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @statistics(%x: tensor<4x300xf32>, %m0: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf64>) {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<4xf64>
  %s0 = linalg.fill ins(%zero : f64) outs(%empty : tensor<4xf64>) -> tensor<4xf64>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x300xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<4x300xf32>, tensor<4xf32>) outs(%s0 : tensor<4xf64>) {
  ^bb0(%v: f32, %mm: f32, %acc: f64):
    %d = arith.subf %v, %mm : f32
    %e = math.exp %d : f32
    %w = arith.extf %e : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  return %m, %s : tensor<4xf32>, tensor<4xf64>
}

// -----

// What stays two passes: a sum over another tensor than the maximum's; a
// sum of something else than exp(x - max) (a square); a sum whose
// accumulator is made after the maximum while another op reads the maximum
// before the sum; and a sum that adds to a value (not from 0), which the
// running sum would rescale.
// CHECK-LABEL: func.func @apart(
// CHECK-NOT:   sinter.online_softmax
// CHECK-COUNT-7: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#vec = affine_map<(i) -> (i)>
func.func @apart(%x: tensor<4x300xf32>, %y: tensor<4x300xf32>, %m0: tensor<4xf32>, %s0: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x300xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %other = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y, %m : tensor<4x300xf32>, tensor<4xf32>) outs(%s0 : tensor<4xf32>) {
  ^bb0(%v: f32, %mm: f32, %acc: f32):
    %d = arith.subf %v, %mm : f32
    %e = math.exp %d : f32
    %r = arith.addf %acc, %e : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %squares = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<4x300xf32>, tensor<4xf32>) outs(%s0 : tensor<4xf32>) {
  ^bb0(%v: f32, %mm: f32, %acc: f32):
    %d = arith.subf %v, %mm : f32
    %e = arith.mulf %d, %d : f32
    %r = arith.addf %acc, %e : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %m2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x300xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %early = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%m2 : tensor<4xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.negf %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %late0 = tensor.empty() : tensor<4xf32>
  %late = linalg.fill ins(%zero : f32) outs(%late0 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y, %m2 : tensor<4x300xf32>, tensor<4xf32>) outs(%late : tensor<4xf32>) {
  ^bb0(%v: f32, %mm: f32, %acc: f32):
    %d = arith.subf %v, %mm : f32
    %e = math.exp %d : f32
    %r = arith.addf %acc, %e : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %onto = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<4x300xf32>, tensor<4xf32>) outs(%s0 : tensor<4xf32>) {
  ^bb0(%v: f32, %mm: f32, %acc: f32):
    %d = arith.subf %v, %mm : f32
    %e = math.exp %d : f32
    %r = arith.addf %acc, %e : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %other, %squares, %early, %s, %onto
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
