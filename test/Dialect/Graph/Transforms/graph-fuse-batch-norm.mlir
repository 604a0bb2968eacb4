// RUN: sinter-opt %s -graph-fuse-batch-norm -split-input-file | FileCheck %s

// On CUDA, std/nn.sn's training batch-norm, (x - mean) * (weight *
// rsqrt(var + eps)) + bias over the per-channel views, is one op; the
// running mean's update reads its mean, and the spelled-out ops are gone.
// CHECK-LABEL: graph.model @bn
// CHECK:       %[[W:.*]] = graph.param "weight"
// CHECK:       %[[B:.*]] = graph.param "bias"
// The epsilon is the model's f32 constant, exactly.
// CHECK:       %[[Y:.*]], %[[MEAN:.*]], %[[VAR:.*]] = graph.batch_norm %x, %[[W]], %[[B]] {epsilon = 9.9999997473787516E-6 : f64}
// CHECK-SAME:  : (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>)
// CHECK:       graph.mul %{{.*}}, %[[MEAN]]
// CHECK:       graph.reduce_mean %[[Y]]
// CHECK:       graph.state_update "running_mean"
// CHECK-NOT:   graph.batch_norm_stats
// CHECK-NOT:   graph.rsqrt
// CHECK-NOT:   graph.sub
module attributes {sinter.device = "cuda"} {
graph.model @bn phase "train" {
  %x = graph.input "x" : tensor<4x3x2x2xf32>
  %w = graph.param "weight" {init = "ones", init_args = array<f64>} : tensor<3xf32>
  %b = graph.param "bias" {init = "zeros", init_args = array<f64>} : tensor<3xf32>
  %rm = graph.state "running_mean" {init = "zeros", init_args = array<f64>} : tensor<3xf32>
  %mean, %var = graph.batch_norm_stats %x {axes = array<i64: 0, 2, 3>} : (tensor<4x3x2x2xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %m = graph.constant dense<1.000000e-01> : tensor<f32>
  %mm = graph.mul %m, %mean : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %eps = graph.constant dense<1.000000e-05> : tensor<f32>
  %ve = graph.add %var, %eps : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %r = graph.rsqrt %ve : (tensor<3xf32>) -> tensor<3xf32>
  %scale = graph.mul %w, %r : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %mv = graph.reshape %mean : (tensor<3xf32>) -> tensor<1x3x1x1xf32>
  %c = graph.sub %x, %mv : (tensor<4x3x2x2xf32>, tensor<1x3x1x1xf32>) -> tensor<4x3x2x2xf32>
  %sv = graph.reshape %scale : (tensor<3xf32>) -> tensor<1x3x1x1xf32>
  %s = graph.mul %c, %sv : (tensor<4x3x2x2xf32>, tensor<1x3x1x1xf32>) -> tensor<4x3x2x2xf32>
  %bv = graph.reshape %b : (tensor<3xf32>) -> tensor<1x3x1x1xf32>
  %y = graph.add %s, %bv : (tensor<4x3x2x2xf32>, tensor<1x3x1x1xf32>) -> tensor<4x3x2x2xf32>
  %l = graph.reduce_mean %y {axes = array<i64>, keepdim = false} : (tensor<4x3x2x2xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
  graph.state_update "running_mean", %mm : tensor<3xf32>
}
}

// -----

// Without weight or bias: the fused op gets ones and zeros. Rank 2: the
// statistics over the batch axis alone.
// CHECK-LABEL: graph.model @plain
// CHECK-DAG:   %[[ONES:.*]] = graph.constant dense<1.000000e+00> : tensor<5xf32>
// CHECK-DAG:   %[[ZEROS:.*]] = graph.constant dense<0.000000e+00> : tensor<5xf32>
// CHECK:       graph.batch_norm %x, %[[ONES]], %[[ZEROS]] {epsilon = 0.0010000000474974513 : f64}
// CHECK-NOT:   graph.batch_norm_stats
module attributes {sinter.device = "cuda"} {
graph.model @plain phase "train" {
  %x = graph.input "x" : tensor<8x5xf32>
  %mean, %var = graph.batch_norm_stats %x {axes = array<i64: 0>} : (tensor<8x5xf32>) -> (tensor<5xf32>, tensor<5xf32>)
  %eps = graph.constant dense<1.000000e-03> : tensor<f32>
  %ve = graph.add %eps, %var : (tensor<f32>, tensor<5xf32>) -> tensor<5xf32>
  %r = graph.rsqrt %ve : (tensor<5xf32>) -> tensor<5xf32>
  %mv = graph.reshape %mean : (tensor<5xf32>) -> tensor<1x5xf32>
  %c = graph.sub %x, %mv : (tensor<8x5xf32>, tensor<1x5xf32>) -> tensor<8x5xf32>
  %sv = graph.reshape %r : (tensor<5xf32>) -> tensor<1x5xf32>
  %y = graph.mul %sv, %c : (tensor<1x5xf32>, tensor<8x5xf32>) -> tensor<8x5xf32>
  %l = graph.reduce_mean %y {axes = array<i64>, keepdim = false} : (tensor<8x5xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// Not fused: on the CPU; statistics that leave out an axis other than the
// channels; a normalization of another tensor than the statistics'.
// CHECK-LABEL: graph.model @cpu
// CHECK-NOT:   graph.batch_norm %
// CHECK:       graph.batch_norm_stats
module {
graph.model @cpu phase "train" {
  %x = graph.input "x" : tensor<8x5xf32>
  %mean, %var = graph.batch_norm_stats %x {axes = array<i64: 0>} : (tensor<8x5xf32>) -> (tensor<5xf32>, tensor<5xf32>)
  %eps = graph.constant dense<1.000000e-03> : tensor<f32>
  %ve = graph.add %var, %eps : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %r = graph.rsqrt %ve : (tensor<5xf32>) -> tensor<5xf32>
  %mv = graph.reshape %mean : (tensor<5xf32>) -> tensor<1x5xf32>
  %c = graph.sub %x, %mv : (tensor<8x5xf32>, tensor<1x5xf32>) -> tensor<8x5xf32>
  %sv = graph.reshape %r : (tensor<5xf32>) -> tensor<1x5xf32>
  %y = graph.mul %c, %sv : (tensor<8x5xf32>, tensor<1x5xf32>) -> tensor<8x5xf32>
  %l = graph.reduce_mean %y {axes = array<i64>, keepdim = false} : (tensor<8x5xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// CHECK-LABEL: graph.model @other
// CHECK-NOT:   graph.batch_norm %
// CHECK-COUNT-2: graph.batch_norm_stats
module attributes {sinter.device = "cuda"} {
graph.model @other phase "train" {
  %x = graph.input "x" : tensor<4x3x2x2xf32>
  %z = graph.input "z" : tensor<4x3x2x2xf32>
  %mean, %var = graph.batch_norm_stats %x {axes = array<i64: 0, 2>} : (tensor<4x3x2x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)
  %mean2, %var2 = graph.batch_norm_stats %x {axes = array<i64: 0, 2, 3>} : (tensor<4x3x2x2xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %eps = graph.constant dense<1.000000e-05> : tensor<f32>
  %ve = graph.add %var2, %eps : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %r = graph.rsqrt %ve : (tensor<3xf32>) -> tensor<3xf32>
  %mv = graph.reshape %mean2 : (tensor<3xf32>) -> tensor<1x3x1x1xf32>
  %c = graph.sub %z, %mv : (tensor<4x3x2x2xf32>, tensor<1x3x1x1xf32>) -> tensor<4x3x2x2xf32>
  %sv = graph.reshape %r : (tensor<3xf32>) -> tensor<1x3x1x1xf32>
  %y = graph.mul %c, %sv : (tensor<4x3x2x2xf32>, tensor<1x3x1x1xf32>) -> tensor<4x3x2x2xf32>
  %l = graph.reduce_mean %y {axes = array<i64>, keepdim = false} : (tensor<4x3x2x2xf32>) -> tensor<f32>
  %l2 = graph.reduce_mean %mean {axes = array<i64>, keepdim = false} : (tensor<3x2xf32>) -> tensor<f32>
  %l3 = graph.add %l, %l2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  graph.loss %l3 : tensor<f32>
}
}
