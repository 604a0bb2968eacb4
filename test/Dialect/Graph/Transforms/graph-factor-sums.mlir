// RUN: sinter-opt %s -graph-factor-sums -split-input-file | FileCheck %s

// Batch-norm's gradient of its mean, channels last: the sum over N, H, W of
// -(g * scale), scale per channel, is -(sum(g) * scale), and that sum of g is
// the one the bias gradient already takes: one sum of g is left, and the
// product g * scale is read by the map alone.
// CHECK-LABEL: func.func @mean_gradient(
// CHECK-SAME:    %[[G:[a-z0-9]+]]: tensor<2x4x4x8xf32>, %[[S:[a-z0-9]+]]: tensor<1x1x1x8xf32>)
// CHECK:         %[[SUM:.*]] = graph.reduce_sum %[[G]] {axes = array<i64: 0, 1, 2>, keepdim = true}
// CHECK:         %[[P:.*]] = graph.mul %[[G]], %[[S]]
// CHECK:         %[[F:.*]] = graph.mul %[[SUM]], %[[S]] : (tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x1x1x8xf32>
// CHECK:         %[[N:.*]] = graph.neg %[[F]]
// CHECK-NOT:     graph.reduce_sum
// CHECK-NOT:     graph.neg %[[P]]
// CHECK:         return %[[SUM]], %[[N]], %[[P]]
func.func @mean_gradient(%g: tensor<2x4x4x8xf32>, %s: tensor<1x1x1x8xf32>) -> (tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>, tensor<2x4x4x8xf32>) {
  %db = graph.reduce_sum %g {axes = array<i64: 0, 1, 2>, keepdim = true} : (tensor<2x4x4x8xf32>) -> tensor<1x1x1x8xf32>
  %p = graph.mul %g, %s : (tensor<2x4x4x8xf32>, tensor<1x1x1x8xf32>) -> tensor<2x4x4x8xf32>
  %n = graph.neg %p : (tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  %dm = graph.reduce_sum %n {axes = array<i64: 0, 1, 2>, keepdim = true} : (tensor<2x4x4x8xf32>) -> tensor<1x1x1x8xf32>
  return %db, %dm, %p : tensor<1x1x1x8xf32>, tensor<1x1x1x8xf32>, tensor<2x4x4x8xf32>
}

// -----

// A factor of lower rank (a row's statistic against [rows, cols] counts its
// missing leading axes as size 1) and a scalar factor, either operand.
// CHECK-LABEL: func.func @lower_rank(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<6x5xf32>, %[[R:[a-z0-9]+]]: tensor<5xf32>, %[[C:[a-z0-9]+]]: tensor<f32>)
// CHECK:         %[[S0:.*]] = graph.reduce_sum %[[X]] {axes = array<i64: 0>, keepdim = true}
// CHECK:         graph.mul %[[S0]], %[[R]] : (tensor<1x5xf32>, tensor<5xf32>) -> tensor<1x5xf32>
// CHECK:         %[[S1:.*]] = graph.reduce_sum %[[X]] {axes = array<i64>, keepdim = true}
// CHECK:         graph.mul %[[S1]], %[[C]] : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
func.func @lower_rank(%x: tensor<6x5xf32>, %r: tensor<5xf32>, %c: tensor<f32>) -> (tensor<1x5xf32>, tensor<1x1xf32>) {
  %p = graph.mul %r, %x : (tensor<5xf32>, tensor<6x5xf32>) -> tensor<6x5xf32>
  %s = graph.reduce_sum %p {axes = array<i64: 0>, keepdim = true} : (tensor<6x5xf32>) -> tensor<1x5xf32>
  %q = graph.mul %x, %c : (tensor<6x5xf32>, tensor<f32>) -> tensor<6x5xf32>
  %t = graph.reduce_sum %q {axes = array<i64>, keepdim = true} : (tensor<6x5xf32>) -> tensor<1x1xf32>
  return %s, %t : tensor<1x5xf32>, tensor<1x1xf32>
}

// -----

// Left as they are: a factor that varies along a summed axis (the product
// of two full tensors, or a per-column factor summed over columns), a sum
// that drops its axes, and integers.
// CHECK-LABEL: func.func @kept(
// CHECK:         %[[P:.*]] = graph.mul %arg0, %arg1
// CHECK:         graph.reduce_sum %[[P]] {axes = array<i64: 0>
// CHECK:         %[[Q:.*]] = graph.mul %arg0, %arg2
// CHECK:         graph.reduce_sum %[[Q]] {axes = array<i64: 1>, keepdim = true}
// CHECK:         graph.reduce_sum %[[Q]] {axes = array<i64: 0>, keepdim = false}
// CHECK:         %[[I:.*]] = graph.mul %arg3, %arg4
// CHECK:         graph.reduce_sum %[[I]]
func.func @kept(%x: tensor<6x5xf32>, %y: tensor<6x5xf32>, %c: tensor<5xf32>, %i: tensor<6x5xi32>, %j: tensor<5xi32>) -> (tensor<1x5xf32>, tensor<6x1xf32>, tensor<5xf32>, tensor<1x5xi32>) {
  %p = graph.mul %x, %y : (tensor<6x5xf32>, tensor<6x5xf32>) -> tensor<6x5xf32>
  %s = graph.reduce_sum %p {axes = array<i64: 0>, keepdim = true} : (tensor<6x5xf32>) -> tensor<1x5xf32>
  %q = graph.mul %x, %c : (tensor<6x5xf32>, tensor<5xf32>) -> tensor<6x5xf32>
  %t = graph.reduce_sum %q {axes = array<i64: 1>, keepdim = true} : (tensor<6x5xf32>) -> tensor<6x1xf32>
  %u = graph.reduce_sum %q {axes = array<i64: 0>, keepdim = false} : (tensor<6x5xf32>) -> tensor<5xf32>
  %k = graph.mul %i, %j : (tensor<6x5xi32>, tensor<5xi32>) -> tensor<6x5xi32>
  %v = graph.reduce_sum %k {axes = array<i64: 0>, keepdim = true} : (tensor<6x5xi32>) -> tensor<1x5xi32>
  return %s, %t, %u, %v : tensor<1x5xf32>, tensor<6x1xf32>, tensor<5xf32>, tensor<1x5xi32>
}

// -----

// No axes means every axis: a per-column factor varies along them.
// CHECK-LABEL: func.func @every_axis(
// CHECK:         %[[P:.*]] = graph.mul %arg0, %arg1
// CHECK:         graph.reduce_sum %[[P]] {axes = array<i64>, keepdim = true}
func.func @every_axis(%x: tensor<6x5xf32>, %c: tensor<5xf32>) -> tensor<1x1xf32> {
  %p = graph.mul %x, %c : (tensor<6x5xf32>, tensor<5xf32>) -> tensor<6x5xf32>
  %s = graph.reduce_sum %p {axes = array<i64>, keepdim = true} : (tensor<6x5xf32>) -> tensor<1x1xf32>
  return %s : tensor<1x1xf32>
}

// -----

// Negative axes name the same axes counted from the end.
// CHECK-LABEL: func.func @negative_axes(
// CHECK:         %[[S:.*]] = graph.reduce_sum %arg0 {axes = array<i64: -4, -3, -2>, keepdim = true}
// CHECK:         graph.mul %[[S]], %arg1
func.func @negative_axes(%g: tensor<2x4x4x8xf32>, %s: tensor<8xf32>) -> tensor<1x1x1x8xf32> {
  %p = graph.mul %g, %s : (tensor<2x4x4x8xf32>, tensor<8xf32>) -> tensor<2x4x4x8xf32>
  %r = graph.reduce_sum %p {axes = array<i64: -4, -3, -2>, keepdim = true} : (tensor<2x4x4x8xf32>) -> tensor<1x1x1x8xf32>
  return %r : tensor<1x1x1x8xf32>
}
