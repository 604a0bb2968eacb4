// RUN: sinter-opt %s -sinter-split-empty-tensors -split-input-file | FileCheck %s

// CSE leaves one tensor.empty for every linalg op of a shape to write into.
// Each use gets its own, next to it, so that bufferization does not see the
// outputs of every layer as aliases of one buffer.

// CHECK-LABEL: func.func @layers(
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[A:.*]] = linalg.generic {{.*}} outs(%[[E0]] : tensor<4xf32>)
// CHECK:         %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4xf32>) outs(%[[E1]] : tensor<4xf32>)
// CHECK:         %[[E2:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[B]] : tensor<4xf32>) outs(%[[E2]] : tensor<4xf32>)
// CHECK-NOT:     tensor.empty
#id = affine_map<(d0) -> (d0)>
func.func @layers(%x: tensor<4xf32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.addf %in, %in : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.mulf %in, %in : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<4xf32>) outs(%empty : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.subf %in, %in : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// CSE leaves one fill of zeros for two reductions to accumulate into: each
// gets its own fill (of its own tensor.empty), next to it, so that
// bufferization writes each in place instead of copying one filled buffer.
// A fill that an op reads stays one.
// CHECK-LABEL: func.func @accumulators(
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[F0:.*]] = linalg.fill ins(%[[Z:.*]] : f32) outs(%[[E0]] : tensor<4xf32>)
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[F0]] : tensor<4xf32>)
// CHECK:         %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[F1:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NEXT:    linalg.generic {{.*}} outs(%[[F1]] : tensor<4xf32>)
// CHECK:         %[[READ:.*]] = linalg.fill
// CHECK:         linalg.generic {{.*}} ins(%[[READ]], %[[READ]] :
// CHECK-NOT:     linalg.fill
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>
#id1 = affine_map<(d0) -> (d0)>
func.func @accumulators(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%zeros : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x8xf32>) outs(%zeros : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %acc, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %one = arith.constant 1.0 : f32
  %empty2 = tensor.empty() : tensor<4xf32>
  %ones = linalg.fill ins(%one : f32) outs(%empty2 : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%ones, %ones : tensor<4xf32>, tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// The micro-batch loop starts two gradient accumulators of one shape from
// one CSE'd fill of zeros: each loop operand gets its own fill, so that
// each accumulator's buffer is filled in place rather than copied from one
// filled buffer.
// CHECK-LABEL: func.func @loop_accumulators(
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[F0:.*]] = linalg.fill ins(%[[Z:.*]] : f32) outs(%[[E0]] : tensor<4xf32>)
// CHECK:         %[[E1:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[F1:.*]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E1]] : tensor<4xf32>)
// CHECK-NEXT:    scf.for {{.*}} iter_args(%{{.*}} = %[[A:[0-9]+]], %{{.*}} = %[[B:[0-9]+]])
// CHECK-NOT:     linalg.fill
#id3 = affine_map<(d0) -> (d0)>
func.func @loop_accumulators(%g: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %empty = tensor.empty() : tensor<4xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<4xf32>) -> tensor<4xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zeros, %b = %zeros) -> (tensor<4xf32>, tensor<4xf32>) {
    %a2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel"]}
        ins(%g : tensor<4xf32>) outs(%a : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.addf %acc, %in : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %b2 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel"]}
        ins(%g : tensor<4xf32>) outs(%b : tensor<4xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.mulf %acc, %in : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %a2, %b2 : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
