// RUN: sinter-opt %s -graph-channels-last -split-input-file | FileCheck %s

// On the CPU, activations are NHWC from the stem's convolution through the
// repeated block, called twice, to the pooling: the block's argument and
// result are NHWC, its convolution is channels_last, its statistics are
// over axes 0, 1 and 2, its per-channel views are [1, 1, 1, C], and the
// residual add reads the argument as it is. One transpose is left: the
// image into NHWC; the global pooling reads the last activation as NHWC.
// CHECK-LABEL: func.func private @block
// CHECK-SAME:  (%[[X:.*]]: tensor<2x4x4x3xf32>, %[[W:.*]]: tensor<3x3x3x3xf32>, %[[S:.*]]: tensor<3xf32>) -> tensor<2x4x4x3xf32>
// CHECK-NOT:   graph.transpose
// CHECK:       %[[C:.*]] = graph.conv2d %[[X]], %[[W]] {channels_last, {{.*}}} : (tensor<2x4x4x3xf32>, tensor<3x3x3x3xf32>) -> tensor<2x4x4x3xf32>
// CHECK:       graph.batch_norm_stats %[[C]] {axes = array<i64: 0, 1, 2>}
// CHECK:       graph.batch_norm_count %[[C]] {axes = array<i64: 0, 1, 2>}
// CHECK:       %[[V:.*]] = graph.reshape %[[S]] : (tensor<3xf32>) -> tensor<1x1x1x3xf32>
// CHECK:       %[[M:.*]] = graph.mul %[[C]], %[[V]] : (tensor<2x4x4x3xf32>, tensor<1x1x1x3xf32>) -> tensor<2x4x4x3xf32>
// CHECK:       %[[A:.*]] = graph.add %[[M]], %[[X]] : (tensor<2x4x4x3xf32>, tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
// CHECK:       %[[R:.*]] = graph.relu %[[A]] : (tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32>
// CHECK-NOT:   graph.transpose
// CHECK:       return %[[R]]
// CHECK-LABEL: graph.model @net
// CHECK:       %[[XT:.*]] = graph.transpose %x {permutation = array<i64: 0, 2, 3, 1>}
// CHECK:       %[[H:.*]] = graph.conv2d %[[XT]], %{{.*}} {channels_last
// CHECK:       %[[B1:.*]] = func.call @block(%[[H]], %{{.*}}) : (tensor<2x4x4x3xf32>, tensor<3x3x3x3xf32>, tensor<3xf32>) -> tensor<2x4x4x3xf32>
// CHECK:       %[[B2:.*]] = func.call @block(%[[B1]], %{{.*}})
// CHECK-NOT:   graph.transpose
// CHECK:       graph.global_avg_pool2d %[[B2]] {channels_last} : (tensor<2x4x4x3xf32>) -> tensor<2x3xf32>
// CHECK-NOT:   graph.transpose
module attributes {sinter.device = "cpu"} {
func.func private @block(%x: tensor<2x3x4x4xf32>, %w: tensor<3x3x3x3xf32>, %s: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %c = graph.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3x3x3x3xf32>) -> tensor<2x3x4x4xf32>
  %mean, %var = graph.batch_norm_stats %c {axes = array<i64: 0, 2, 3>} : (tensor<2x3x4x4xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %n = graph.batch_norm_count %c {axes = array<i64: 0, 2, 3>} : (tensor<2x3x4x4xf32>) -> tensor<f32>
  %sv = graph.reshape %s : (tensor<3xf32>) -> tensor<1x3x1x1xf32>
  %m = graph.mul %c, %sv : (tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %a = graph.add %m, %x : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %r = graph.relu %a : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return %r : tensor<2x3x4x4xf32>
}
graph.model @net phase "train" {
  %x = graph.input "x" : tensor<2x3x4x4xf32>
  %w = graph.param "w" {init = "ones", init_args = array<f64>} : tensor<3x3x3x3xf32>
  %s = graph.param "s" {init = "ones", init_args = array<f64>} : tensor<3xf32>
  %h = graph.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3x3x3x3xf32>) -> tensor<2x3x4x4xf32>
  %b1 = func.call @block(%h, %w, %s) : (tensor<2x3x4x4xf32>, tensor<3x3x3x3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %b2 = func.call @block(%b1, %w, %s) : (tensor<2x3x4x4xf32>, tensor<3x3x3x3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %p = graph.global_avg_pool2d %b2 : (tensor<2x3x4x4xf32>) -> tensor<2x3xf32>
  %l = graph.reduce_mean %p {axes = array<i64>, keepdim = false} : (tensor<2x3xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// Max and average poolings between convolutions are made channels last
// too: no transpose between the first convolution and the classifier's
// reshape, which reads the NCHW view.
// CHECK-LABEL: graph.model @pooled
// CHECK:       %[[XT:.*]] = graph.transpose %x {permutation = array<i64: 0, 2, 3, 1>}
// CHECK:       %[[C1:.*]] = graph.conv2d %[[XT]], %{{.*}} {channels_last
// CHECK:       %[[R1:.*]] = graph.relu %[[C1]] : (tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
// CHECK:       %[[P1:.*]] = graph.max_pool2d %[[R1]] {channels_last, {{.*}}} : (tensor<2x8x8x4xf32>) -> tensor<2x4x4x4xf32>
// CHECK:       %[[C2:.*]] = graph.conv2d %[[P1]], %{{.*}} {channels_last
// CHECK:       %[[P2:.*]] = graph.avg_pool2d %[[C2]] {channels_last, {{.*}}} : (tensor<2x4x4x4xf32>) -> tensor<2x2x2x4xf32>
// CHECK:       %[[BACK:.*]] = graph.transpose %[[P2]] {permutation = array<i64: 0, 3, 1, 2>}
// CHECK:       graph.reshape %[[BACK]]
module attributes {sinter.device = "cpu"} {
graph.model @pooled phase "train" {
  %x = graph.input "x" : tensor<2x3x8x8xf32>
  %w1 = graph.param "w1" {init = "ones", init_args = array<f64>} : tensor<4x3x3x3xf32>
  %w2 = graph.param "w2" {init = "ones", init_args = array<f64>} : tensor<4x4x3x3xf32>
  %c1 = graph.conv2d %x, %w1 {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %r1 = graph.relu %c1 : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p1 = graph.max_pool2d %r1 {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
  %c2 = graph.conv2d %p1, %w2 {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x4x4x4xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x4x4xf32>
  %p2 = graph.avg_pool2d %c2 {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>) -> tensor<2x4x2x2xf32>
  %f = graph.reshape %p2 : (tensor<2x4x2x2xf32>) -> tensor<2x16xf32>
  %l = graph.reduce_mean %f {axes = array<i64>, keepdim = false} : (tensor<2x16xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// Statistics over other axes than N, H and W, and ops that are not
// elementwise, read the NCHW view: a transpose back stays before them.
// CHECK-LABEL: graph.model @partial
// CHECK:       %[[C:.*]] = graph.conv2d %{{.*}} {channels_last
// CHECK:       %[[T:.*]] = graph.transpose %[[C]] {permutation = array<i64: 0, 3, 1, 2>}
// CHECK:       graph.batch_norm_stats %[[T]] {axes = array<i64: 0>}
// CHECK:       graph.reduce_mean %[[T]]
module attributes {sinter.device = "cpu"} {
graph.model @partial phase "train" {
  %x = graph.input "x" : tensor<2x3x4x4xf32>
  %w = graph.param "w" {init = "ones", init_args = array<f64>} : tensor<3x3x3x3xf32>
  %c = graph.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3x3x3x3xf32>) -> tensor<2x3x4x4xf32>
  %mean, %var = graph.batch_norm_stats %c {axes = array<i64: 0>} : (tensor<2x3x4x4xf32>) -> (tensor<3x4x4xf32>, tensor<3x4x4xf32>)
  %l = graph.reduce_mean %c {axes = array<i64>, keepdim = false} : (tensor<2x3x4x4xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// Elsewhere than the CPU nothing changes.
// CHECK-LABEL: graph.model @gpu
// CHECK-NOT:   channels_last
// CHECK-NOT:   graph.transpose
module attributes {sinter.device = "cuda"} {
graph.model @gpu phase "train" {
  %x = graph.input "x" : tensor<2x3x4x4xf32>
  %w = graph.param "w" {init = "ones", init_args = array<f64>} : tensor<3x3x3x3xf32>
  %c = graph.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3x3x3x3xf32>) -> tensor<2x3x4x4xf32>
  %r = graph.relu %c : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %l = graph.reduce_mean %r {axes = array<i64>, keepdim = false} : (tensor<2x3x4x4xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// A grouped convolution too: oneDNN's grouped and depthwise kernels take
// NHWC.
// CHECK-LABEL: graph.model @grouped
// CHECK:       %[[X:.*]] = graph.transpose %x {permutation = array<i64: 0, 2, 3, 1>}
// CHECK:       %[[C:.*]] = graph.conv2d %[[X]], %w {channels_last, {{.*}}groups = 2
// CHECK:       %[[R:.*]] = graph.relu %[[C]]
// CHECK:       graph.transpose %[[R]] {permutation = array<i64: 0, 3, 1, 2>}
module attributes {sinter.device = "cpu"} {
graph.model @grouped phase "train" {
  %x = graph.input "x" : tensor<2x4x4x4xf32>
  %w = graph.param "w" {init = "ones", init_args = array<f64>} : tensor<4x2x3x3xf32>
  %c = graph.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 1, 1>} : (tensor<2x4x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<2x4x4x4xf32>
  %r = graph.relu %c : (tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  %l = graph.reduce_mean %r {axes = array<i64>, keepdim = false} : (tensor<2x4x4x4xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}
