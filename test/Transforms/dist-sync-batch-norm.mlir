// RUN: sinter-opt %s -dist-sync-batch-norm | FileCheck %s

// With SYNC statistics, the mean and the variance come from the sum, the sum
// of squares and the count, each summed over the ranks; the count the
// running variance uses too. Autodiff, later, differentiates through the
// sums over ranks.
// CHECK-LABEL: graph.model @bn phase "train"
// CHECK:       %[[N:.*]] = graph.batch_norm_count %[[X:.*]] {axes = array<i64: 0>}
// CHECK-NEXT:  %[[NALL:.*]] = graph.all_reduce_sum %[[N]] : tensor<f32>
// CHECK:       %[[S:.*]] = graph.reduce_sum %[[X]] {axes = array<i64: 0>, keepdim = false}
// CHECK:       %[[XX:.*]] = graph.mul %[[X]], %[[X]]
// CHECK:       %[[SS:.*]] = graph.reduce_sum %[[XX]]
// CHECK:       %[[C:.*]] = graph.batch_norm_count %[[X]]
// CHECK:       %[[SALL:.*]] = graph.all_reduce_sum %[[S]] : tensor<3xf32>
// CHECK:       %[[SSALL:.*]] = graph.all_reduce_sum %[[SS]] : tensor<3xf32>
// CHECK:       %[[CALL:.*]] = graph.all_reduce_sum %[[C]] : tensor<f32>
// CHECK:       %[[MEAN:.*]] = graph.div %[[SALL]], %[[CALL]]
// CHECK:       %[[M2:.*]] = graph.mul %[[MEAN]], %[[MEAN]]
// CHECK:       %[[E2:.*]] = graph.div %[[SSALL]], %[[CALL]]
// CHECK:       graph.sub %[[E2]], %[[M2]]
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
