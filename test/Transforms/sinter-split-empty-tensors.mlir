// RUN: sinter-opt %s -sinter-split-empty-tensors | FileCheck %s

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
