// RUN: sinter-opt %s -graph-round-residuals -split-input-file | FileCheck %s

// precision.residual BF16: in a layer (a repeated block), the sum of the
// stream (the activation the layer takes) and another activation is read
// rounded to bf16, and so is the next sum of that rounded stream; a bias
// added (a parameter) and a sum of two activations off the stream are not.
// The embeddings' sum entering the first layer is passed rounded to the
// call (its other reader, the loss, reads it as it is); the second layer's
// input, the first's rounded result, is not rounded again. A sum outside
// the layers (the two means) is not the stream.
// CHECK-LABEL: func.func private @net.h(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<2x4x8xf32>, %[[B:[^:]*]]: tensor<8xf32>)
// CHECK:         %[[Y:.*]] = graph.add %[[X]], %[[B]]
// CHECK-NEXT:    %[[S:.*]] = graph.add %[[X]], %[[Y]]
// CHECK-NEXT:    %[[N:.*]] = graph.cast %[[S]] : (tensor<2x4x8xf32>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[W:.*]] = graph.cast %[[N]] : (tensor<2x4x8xbf16>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    %[[OFF:.*]] = graph.add %[[Y]], %[[Y]]
// CHECK-NEXT:    %[[S2:.*]] = graph.add %[[W]], %[[OFF]]
// CHECK-NEXT:    %[[N2:.*]] = graph.cast %[[S2]] : (tensor<2x4x8xf32>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[W2:.*]] = graph.cast %[[N2]] : (tensor<2x4x8xbf16>) -> tensor<2x4x8xf32>
// CHECK-NEXT:    return %[[W2]]
// CHECK-LABEL: graph.model @net
// CHECK:         %[[E:.*]] = graph.add %{{.*}}, %{{.*}} : (tensor<2x4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT:    %[[EN:.*]] = graph.cast %[[E]] : (tensor<2x4x8xf32>) -> tensor<2x4x8xbf16>
// CHECK-NEXT:    %[[EW:.*]] = graph.cast %[[EN]] : (tensor<2x4x8xbf16>) -> tensor<2x4x8xf32>
// CHECK:         %[[H0:.*]] = func.call @net.h(%[[EW]], %{{.*}})
// CHECK-NEXT:    %[[H1:.*]] = func.call @net.h(%[[H0]], %{{.*}})
// CHECK-NEXT:    graph.reduce_mean %[[H1]]
// CHECK-NEXT:    graph.reduce_mean %[[E]]
// CHECK-NOT:     graph.cast
module attributes {sinter.residual = "bf16"} {
func.func private @net.h(%x: tensor<2x4x8xf32>, %b: tensor<8xf32>) -> tensor<2x4x8xf32>
    attributes {sinter.block = "h"} {
  %y = graph.add %x, %b : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %s = graph.add %x, %y : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %off = graph.add %y, %y : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s2 = graph.add %s, %off : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %s2 : tensor<2x4x8xf32>
}
graph.model @net phase "train" {
  %x = graph.input "x" : tensor<2x4x8xf32>
  %p = graph.param "p" {init = "zeros", init_args = array<f64>} : tensor<4x8xf32>
  %b = graph.param "b" {init = "zeros", init_args = array<f64>} : tensor<8xf32>
  %e = graph.add %x, %p : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  %h0 = func.call @net.h(%e, %b) : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %h1 = func.call @net.h(%h0, %b) : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %m1 = graph.reduce_mean %h1 {axes = array<i64>, keepdim = false} : (tensor<2x4x8xf32>) -> tensor<f32>
  %m2 = graph.reduce_mean %e {axes = array<i64>, keepdim = false} : (tensor<2x4x8xf32>) -> tensor<f32>
  %l = graph.add %m1, %m2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// Outside a layer nothing is rounded, and two parameters' sum is not an
// activation; without the setting nothing is rounded either.
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
