// RUN: sinter-opt %s -dist-sync-batch-norm -split-input-file | FileCheck %s

// With SYNC statistics, the mean is the sum over the ranks over the count
// over the ranks; the variance the sum over the ranks of the squared
// deviations from that mean, over the same count (two passes: no sum of
// squares to cancel). The running variance's count is summed over the ranks
// too. Autodiff, later, differentiates through the sums over ranks.
// CHECK-LABEL: graph.model @bn phase "train"
// CHECK:       %[[N:.*]] = graph.batch_norm_count %[[X:.*]] {axes = array<i64: 0>}
// CHECK-NEXT:  %[[NALL:.*]] = graph.all_reduce_sum %[[N]] : tensor<f32>
// CHECK:       %[[C:.*]] = graph.batch_norm_count %[[X]]
// CHECK:       %[[CALL:.*]] = graph.all_reduce_sum %[[C]] : tensor<f32>
// CHECK:       %[[S:.*]] = graph.reduce_sum %[[X]] {axes = array<i64: 0>, keepdim = true}
// CHECK:       %[[SALL:.*]] = graph.all_reduce_sum %[[S]] : tensor<1x3xf32>
// CHECK:       %[[MEAN:.*]] = graph.div %[[SALL]], %[[CALL]]
// CHECK:       %[[D:.*]] = graph.sub %[[X]], %[[MEAN]]
// CHECK:       %[[DD:.*]] = graph.mul %[[D]], %[[D]]
// CHECK:       %[[SS:.*]] = graph.reduce_sum %[[DD]] {axes = array<i64: 0>, keepdim = false}
// CHECK:       %[[SSALL:.*]] = graph.all_reduce_sum %[[SS]] : tensor<3xf32>
// CHECK:       %[[VAR:.*]] = graph.div %[[SSALL]], %[[CALL]]
// CHECK:       graph.reshape %[[MEAN]] : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK-NOT:   graph.batch_norm_stats
// CHECK:       graph.state_update "count", %[[NALL]]
// The eval phase is left alone.
// CHECK-LABEL: graph.model @bn.eval
// CHECK:       graph.batch_norm_stats
// CHECK-NOT:   graph.all_reduce_sum
module attributes {sinter.sync_batch_norm} {
  graph.model @bn phase "train" {
    %x = graph.input "x" : tensor<4x3xf32>
    %n = graph.batch_norm_count %x {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<f32>
    %mean, %var = graph.batch_norm_stats %x {axes = array<i64: 0>} : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    %l = graph.reduce_mean %var {axes = array<i64>, keepdim = false} : (tensor<3xf32>) -> tensor<f32>
    graph.loss %l : tensor<f32>
    %s = graph.state "count" {init = "zeros", init_args = array<f64>} : tensor<f32>
    graph.state_update "count", %n : tensor<f32>
  }
  graph.model @bn.eval phase "eval" {
    %x = graph.input "x" : tensor<4x3xf32>
    %mean, %var = graph.batch_norm_stats %x {axes = array<i64: 0>} : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    %l = graph.reduce_mean %var {axes = array<i64>, keepdim = false} : (tensor<3xf32>) -> tensor<f32>
    graph.loss %l : tensor<f32>
  }
}

// -----

// The batch-norms of a repeated block the train step calls are synchronized
// too; the eval step's block is left alone.
// CHECK-LABEL: func.func private @bn.layer(
// CHECK:       graph.all_reduce_sum
// CHECK-NOT:   graph.batch_norm_stats
// CHECK-LABEL: func.func private @bn.eval.layer(
// CHECK:       graph.batch_norm_stats
// CHECK-NOT:   graph.all_reduce_sum
module attributes {sinter.sync_batch_norm} {
  func.func private @bn.layer(%x: tensor<4x3xf32>) -> tensor<3xf32> attributes {sinter.block = "layer"} {
    %mean, %var = graph.batch_norm_stats %x {axes = array<i64: 0>} : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    return %var : tensor<3xf32>
  }
  graph.model @bn phase "train" {
    %x = graph.input "x" : tensor<4x3xf32>
    %v = func.call @bn.layer(%x) : (tensor<4x3xf32>) -> tensor<3xf32>
    %l = graph.reduce_mean %v {axes = array<i64>, keepdim = false} : (tensor<3xf32>) -> tensor<f32>
    graph.loss %l : tensor<f32>
  }
  func.func private @bn.eval.layer(%x: tensor<4x3xf32>) -> tensor<3xf32> attributes {sinter.block = "layer"} {
    %mean, %var = graph.batch_norm_stats %x {axes = array<i64: 0>} : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    return %var : tensor<3xf32>
  }
  graph.model @bn.eval phase "eval" {
    %x = graph.input "x" : tensor<4x3xf32>
    %v = func.call @bn.eval.layer(%x) : (tensor<4x3xf32>) -> tensor<3xf32>
    %l = graph.reduce_mean %v {axes = array<i64>, keepdim = false} : (tensor<3xf32>) -> tensor<f32>
    graph.loss %l : tensor<f32>
  }
}
