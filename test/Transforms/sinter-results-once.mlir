// RUN: sinter-opt %s -sinter-results-once | FileCheck %s

// A layer's function returns a tensor, the same tensor again and a
// reshape of it (attention's output, for its own gradient and for a
// weight's): it returns it once, and each call makes the other two from
// that result. A reshape of a result that is itself remade stays.
// CHECK-LABEL: func.func private @layer(
// CHECK-SAME:    -> (tensor<2x3x4xf32>, tensor<8xf32>)
// CHECK:         return %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<8xf32>
// CHECK-LABEL: func.func @step(
// CHECK:         %[[R:.*]]:2 = call @layer(%{{.*}}) : (tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<8xf32>)
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[R]]#0 {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK-NEXT:    return %[[R]]#0, %[[C]], %[[R]]#1, %[[R]]#0
// CHECK-LABEL: func.func private @chain(
// CHECK-SAME:    -> (tensor<2x3x4xf32>, tensor<24xf32>)
// CHECK-LABEL: func.func @chain_caller(
// CHECK:         %[[R:.*]]:2 = call @chain(
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[R]]#0
// CHECK-NEXT:    return %[[R]]#0, %[[C]], %[[R]]#1
// CHECK-LABEL: func.func @public(
// CHECK-SAME:    -> (tensor<2x3x4xf32>, tensor<6x4xf32>)
#id = affine_map<(a, b, c) -> (a, b, c)>
func.func private @layer(%x: tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<8xf32>, tensor<2x3x4xf32>) {
  %e = tensor.empty() : tensor<2x3x4xf32>
  %a = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%e : tensor<2x3x4xf32>) {
  ^bb0(%out: f32):
    %one = arith.constant 1.0 : f32
    linalg.yield %one : f32
  } -> tensor<2x3x4xf32>
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %b = tensor.empty() : tensor<8xf32>
  return %a, %c, %b, %a : tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<8xf32>, tensor<2x3x4xf32>
}
func.func @step(%x: tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<8xf32>, tensor<2x3x4xf32>) {
  %r:4 = call @layer(%x) : (tensor<4xf32>) -> (tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<8xf32>, tensor<2x3x4xf32>)
  return %r#0, %r#1, %r#2, %r#3 : tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<8xf32>, tensor<2x3x4xf32>
}
func.func private @chain(%a: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<24xf32>) {
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  %d = tensor.collapse_shape %c [[0, 1]] : tensor<6x4xf32> into tensor<24xf32>
  return %a, %c, %d : tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<24xf32>
}
func.func @chain_caller(%a: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<24xf32>) {
  %r:3 = call @chain(%a) : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<24xf32>)
  return %r#0, %r#1, %r#2 : tensor<2x3x4xf32>, tensor<6x4xf32>, tensor<24xf32>
}
// A public function keeps its results.
func.func @public(%a: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<6x4xf32>) {
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
  return %a, %c : tensor<2x3x4xf32>, tensor<6x4xf32>
}
