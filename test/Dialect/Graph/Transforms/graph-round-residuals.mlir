// RUN: sinter-opt %s -graph-round-residuals -split-input-file | FileCheck %s

// precision.residual BF16: in a layer (a repeated block), the sum of two
// activations is read rounded to bf16; a bias added (a parameter) is not.
// The embeddings' sum entering the first layer is rounded at the call; the
// second layer's input, the first's rounded result, is not rounded again.
// CHECK-LABEL: func.func private @net.h(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x4x8xf32>, %[[B:[^:]*]]: tensor<8xf32>)
// CHECK:         %[[Y:.*]] = graph.add %[[X]], %[[B]]
// CHECK-NEXT:    %[[S:.*]] = graph.add %[[X]], %[[Y]]
// CHECK-NEXT:    %[[N:.*]] = graph.cast %[[S]] : (tensor<2x4x8xf32>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[W:.*]] = graph.cast %[[N]] : (tensor<2x4x8xbf16>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    return %[[W]]
// CHECK-LABEL: graph.model @net
// CHECK:         %[[E:.*]] = graph.add %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    %[[EN:.*]] = graph.cast %[[E]] : (tensor<2x4x8xf32>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[EW:.*]] = graph.cast %[[EN]] : (tensor<2x4x8xbf16>) -> tensor<2x4x8xf32>
// CHECK:         %[[H0:.*]] = func.call @net.h(%[[EW]], %{{.*}})
// CHECK-NEXT:    %[[H1:.*]] = func.call @net.h(%[[H0]], %{{.*}})
// CHECK-NOT:     graph.cast
module attributes {sinter.residual = "bf16"} {
func.func private @net.h(%x: tensor<2x4x8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32>
    attributes {sinter.block = "h"} {
  %y = graph.add %x, %b : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %s = graph.add %x, %y : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %s : tensor<2x4x8xf32>
}
graph.model @net phase "train" {
  %x = graph.input "x" : tensor<2x4x8xf32>
  %p = graph.param "p" {init = "zeros", init_args = array<f64>} : tensor<4x8xf32>
  %b = graph.param "b" {init = "zeros", init_args = array<f64>} : tensor<8xf32>
  %e = graph.add %x, %p : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  %h0 = func.call @net.h(%e, %b) : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %h1 = func.call @net.h(%h0, %b) : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %l = graph.reduce_mean %h1 {axes = array<i64>, keepdim = false} : (tensor<2x4x8xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// Two parameters' sum is not an activation; without the setting nothing
// is rounded.
// CHECK-LABEL: graph.model @params
// CHECK-NOT:     graph.cast
// CHECK-LABEL: graph.model @off
// CHECK-NOT:     graph.cast
module attributes {sinter.residual = "bf16"} {
graph.model @params phase "train" {
  %p = graph.param "p" {init = "zeros", init_args = array<f64>} : tensor<4x8xf32>
  %q = graph.param "q" {init = "zeros", init_args = array<f64>} : tensor<4x8xf32>
  %s = graph.add %p, %q : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = graph.reduce_mean %s {axes = array<i64>, keepdim = false} : (tensor<4x8xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

module {
graph.model @off phase "train" {
  %x = graph.input "x" : tensor<4x8xf32>
  %y = graph.input "y" : tensor<4x8xf32>
  %s = graph.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = graph.reduce_mean %s {axes = array<i64>, keepdim = false} : (tensor<4x8xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}
