// RUN: sinter-opt %s -graph-model-to-func -split-input-file | FileCheck %s

// Inputs, params and states become tagged arguments in declaration order;
// the loss, metrics and state updates become tagged results in that order.

// CHECK-LABEL: func.func @m(
// CHECK-SAME:   %[[X:.*]]: tensor<4x3xf32> {sinter.input = "x"},
// CHECK-SAME:   %[[W:.*]]: tensor<3xf32> {sinter.init = "normal", sinter.init_args = array<f64: 0.000000e+00, 2.000000e-02>, sinter.param = "w"},
// CHECK-SAME:   %[[S:.*]]: tensor<3xf32> {sinter.init = "zeros", sinter.init_args = array<f64>, sinter.state = "s"})
// CHECK-SAME:   -> (tensor<f32> {sinter.loss = "loss"}, tensor<f32> {sinter.metric = "m"}, tensor<3xf32> {sinter.state = "s"})
// CHECK-SAME:   attributes {sinter.phase = "train"}
// CHECK:        %[[Y:.*]] = graph.mul %[[X]], %[[W]]
// CHECK:        %[[L:.*]] = graph.reduce_mean %[[Y]]
// CHECK:        %[[N:.*]] = graph.add %[[S]], %[[W]]
// CHECK:        return %[[L]], %[[L]], %[[N]]
graph.model @m phase "train" {
  %x = graph.input "x" : tensor<4x3xf32>
  %w = graph.param "w" {init = "normal", init_args = array<f64: 0.0, 0.02>} : tensor<3xf32>
  %s = graph.state "s" {init = "zeros", init_args = array<f64>} : tensor<3xf32>
  %y = graph.mul %x, %w : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %l = graph.reduce_mean %y {axes = array<i64>, keepdim = false} : (tensor<4x3xf32>) -> tensor<f32>
  graph.metric "m", %l : tensor<f32>
  %n = graph.add %s, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  graph.state_update "s", %n : tensor<3xf32>
  graph.loss %l : tensor<f32>
}

// -----

// Each phase becomes its own function.
// CHECK-LABEL: func.func @m(
// CHECK-LABEL: func.func @m.eval(
// CHECK-SAME:   attributes {sinter.phase = "eval"}
graph.model @m phase "train" {
  %x = graph.input "x" : tensor<2xf32>
  %l = graph.reduce_sum %x {axes = array<i64>, keepdim = false} : (tensor<2xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
graph.model @m.eval phase "eval" {
  %x = graph.input "x" : tensor<2xf32>
  %l = graph.reduce_sum %x {axes = array<i64>, keepdim = false} : (tensor<2xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// An integer input's range is bound by its uses, also inside a repeated
// block that the model calls.

// CHECK-LABEL: func.func @m(
// CHECK-SAME:   tensor<2x4xi32> {sinter.input = "idx", sinter.value_bound = 7 : i64, sinter.value_bound_source = "the embedding at
func.func private @m.r(%idx: tensor<2x4xi32>, %t: tensor<7x8xf32>) -> tensor<2x4x8xf32> attributes {sinter.block = "r"} {
  %e = graph.embedding %idx, %t : (tensor<2x4xi32>, tensor<7x8xf32>) -> tensor<2x4x8xf32>
  return %e : tensor<2x4x8xf32>
}
graph.model @m phase "train" {
  %idx = graph.input "idx" : tensor<2x4xi32>
  %t = graph.param "r.0.t" {init = "zeros", init_args = array<f64>} : tensor<7x8xf32>
  %e = func.call @m.r(%idx, %t) : (tensor<2x4xi32>, tensor<7x8xf32>) -> tensor<2x4x8xf32>
  %l = graph.reduce_mean %e {axes = array<i64>, keepdim = false} : (tensor<2x4x8xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
