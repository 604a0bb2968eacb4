// RUN: sinter-opt %s -sinter-merge-sibling-reductions -split-input-file | FileCheck %s

// Layer norm's backward row sums: sum(dy * g * xhat) and sum(dy * g) over
// the same rows both read dy. One generic in the first one's place reads
// dy, g and xhat once each and yields both sums, each with its own fold
// (an f64 sum, an f32 maximum).
// CHECK-LABEL: func.func @row_sums(
// CHECK-SAME:    %[[DY:[a-z0-9]+]]: tensor<4x8xf32>, %[[G:[a-z0-9]+]]: tensor<8xf32>, %[[XH:[a-z0-9]+]]: tensor<4x8xf32>, %[[A:[a-z0-9]+]]: tensor<4xf64>, %[[B:[a-z0-9]+]]: tensor<4xf32>
// CHECK:       %[[M:.*]]:2 = linalg.generic {indexing_maps = [#[[ID:.*]], #[[COL:.*]], #[[ID]], #[[ROW:.*]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:    ins(%[[DY]], %[[G]], %[[XH]] : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) outs(%[[A]], %[[B]] : tensor<4xf64>, tensor<4xf32>)
// CHECK:       ^bb0(%[[D:.*]]: f32, %[[GG:.*]]: f32, %[[X:.*]]: f32, %[[ACC:.*]]: f64, %[[MAX:.*]]: f32):
// CHECK:         %[[P:.*]] = arith.mulf %[[D]], %[[GG]]
// CHECK:         %[[Q:.*]] = arith.mulf %[[P]], %[[X]]
// CHECK:         %[[W:.*]] = arith.extf %[[Q]]
// CHECK:         %[[S:.*]] = arith.addf %[[ACC]], %[[W]]
// CHECK:         %[[P2:.*]] = arith.mulf %[[D]], %[[GG]]
// CHECK:         %[[T:.*]] = arith.maximumf %[[MAX]], %[[P2]]
// CHECK:         linalg.yield %[[S]], %[[T]]
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[M]]#0, %[[M]]#1
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_sums(%dy: tensor<4x8xf32>, %g: tensor<8xf32>, %xh: tensor<4x8xf32>,
                    %a: tensor<4xf64>, %b: tensor<4xf32>) -> (tensor<4xf64>, tensor<4xf32>) {
  %s = linalg.generic {indexing_maps = [#id, #col, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dy, %g, %xh : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>) outs(%a : tensor<4xf64>) {
  ^bb0(%d: f32, %gg: f32, %x: f32, %acc: f64):
    %p = arith.mulf %d, %gg : f32
    %q = arith.mulf %p, %x : f32
    %w = arith.extf %q : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  %t = linalg.generic {indexing_maps = [#id, #col, #row], iterator_types = ["parallel", "reduction"]}
      ins(%dy, %g : tensor<4x8xf32>, tensor<8xf32>) outs(%b : tensor<4xf32>) {
  ^bb0(%d: f32, %gg: f32, %m: f32):
    %p = arith.mulf %d, %gg : f32
    %r = arith.maximumf %m, %p : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s, %t : tensor<4xf64>, tensor<4xf32>
}

// -----

// What stays apart: a reduction that reads the other's result; other
// loops (the same input summed down its columns); no input in common; an
// input read at another place (transposed); an operand defined between
// the two (a third sum's accumulator, made after the first); a body that
// takes a value defined between the two (a scale); a fold that is not an
// add, mul, max or min (a select); and a marked generic (a softmax's
// running pair).
// CHECK-LABEL: func.func @apart(
// CHECK-COUNT-9: linalg.generic
// CHECK-NOT:   linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (i)>
#rowT = affine_map<(i, j) -> (j)>
func.func @apart(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>, %a: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %dependent = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4xf32>) outs(%s : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %columns = linalg.generic {indexing_maps = [#id, #rowT], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %other = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %transposed = linalg.generic {indexing_maps = [#t, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %late = tensor.empty() : tensor<4xf32>
  %after = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4xf32>) outs(%late : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %scale = arith.constant 2.0 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %w = arith.mulf %v, %scale : f32
    %r = arith.addf %acc, %w : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %selected = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %gt = arith.cmpf ogt, %v, %acc : f32
    %r = arith.select %gt, %v, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %marked = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x4xf32>) outs(%a : tensor<4xf32>) attrs = {sinter.online_softmax} {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s, %dependent, %columns, %other, %transposed, %after, %scaled, %selected, %marked
      : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>,
        tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
