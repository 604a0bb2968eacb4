// RUN: sinter-opt %s -train-normalize-loss -split-input-file -verify-diagnostics | FileCheck %s

// A mean over samples becomes its share b/G of the global mean; a metric
// that reads the same value keeps the micro-batch's own.
// CHECK-LABEL: graph.model @mean phase "train"
// CHECK:       %[[CE:.*]] = graph.cross_entropy %{{.*}}, %{{.*}} {{{.*}}reduction = "mean"}
// CHECK-NEXT:  %[[F:.*]] = train.sample_fraction : tensor<f32>
// CHECK-NEXT:  %[[S:.*]] = graph.mul %[[CE]], %[[F]]
// CHECK:       graph.loss %[[S]]
// CHECK:       graph.metric "ce", %[[CE]]
graph.model @mean phase "train" {
  %x = graph.input "x" : tensor<4x10xf32>
  %y = graph.input "y" : tensor<4xi32>
  %w = graph.param "w" {init = "zeros", init_args = array<f64>} : tensor<10xf32>
  %l = graph.mul %x, %w : (tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  %ce = graph.cross_entropy %l, %y {label_smoothing = 0.0 : f64, reduction = "mean"} : (tensor<4x10xf32>, tensor<4xi32>) -> tensor<f32>
  graph.loss %ce : tensor<f32>
  graph.metric "ce", %ce : tensor<f32>
}
// The eval phase is left alone.
// CHECK-LABEL: graph.model @mean.eval phase "eval"
// CHECK-NOT:   train.
graph.model @mean.eval phase "eval" {
  %x = graph.input "x" : tensor<4x10xf32>
  %m = graph.reduce_mean %x {axes = array<i64>, keepdim = false} : (tensor<4x10xf32>) -> tensor<f32>
  graph.loss %m : tensor<f32>
}

// -----

// A mean over valid tokens: this micro-batch's sum over the global count of
// targets that are not ignore_index, counted from the targets alone.
// CHECK-LABEL: graph.model @tokens
// CHECK:       %[[SUM:.*]] = graph.cross_entropy %{{.*}}, %[[T:[a-z0-9]+]] {ignore_index = -1 : i64, {{.*}}reduction = "sum"}
// CHECK-NEXT:  %[[IGN:.*]] = graph.constant dense<-1> : tensor<i32>
// CHECK-NEXT:  %[[VALID:.*]] = graph.compare %[[T]], %[[IGN]] {predicate = "ne"} : (tensor<2x8xi32>, tensor<i32>) -> tensor<2x8xi1>
// CHECK-NEXT:  %[[N:.*]] = train.global_count %[[VALID]] : (tensor<2x8xi1>) -> tensor<f32>
// CHECK-NEXT:  %[[Q:.*]] = graph.div %[[SUM]], %[[N]]
// CHECK:       graph.loss %[[Q]]
graph.model @tokens phase "train" {
  %x = graph.input "x" : tensor<2x8x5xf32>
  %t = graph.input "t" : tensor<2x8xi32>
  %w = graph.param "w" {init = "zeros", init_args = array<f64>} : tensor<5xf32>
  %l = graph.mul %x, %w : (tensor<2x8x5xf32>, tensor<5xf32>) -> tensor<2x8x5xf32>
  %ce = graph.cross_entropy %l, %t {ignore_index = -1 : i64, label_smoothing = 0.0 : f64, reduction = "mean"} : (tensor<2x8x5xf32>, tensor<2x8xi32>) -> tensor<f32>
  graph.loss %ce : tensor<f32>
}

// -----

// Terms with different reductions: a sum stays, a scaled mean takes its
// share, and a penalty on parameters alone is counted once per step.
// CHECK-LABEL: graph.model @mixed
// CHECK:       %[[SUM:.*]] = graph.mse_loss {{.*}} {reduction = "sum"}
// CHECK-NOT:   train.sample_fraction
// CHECK:       %[[M:.*]] = graph.reduce_mean
// CHECK-NEXT:  %[[F1:.*]] = train.sample_fraction
// CHECK-NEXT:  %[[MS:.*]] = graph.mul %[[M]], %[[F1]]
// CHECK:       graph.mul %[[HALF:.*]], %[[MS]]
// CHECK:       %[[P:.*]] = graph.reduce_sum %[[WW:.*]] {axes = array<i64>
// CHECK-NEXT:  %[[F2:.*]] = train.sample_fraction
// CHECK-NEXT:  graph.mul %[[P]], %[[F2]]
graph.model @mixed phase "train" {
  %a = graph.input "a" : tensor<4x3xf32>
  %b = graph.input "b" : tensor<4x3xf32>
  %w = graph.param "w" {init = "zeros", init_args = array<f64>} : tensor<3xf32>
  %p = graph.mul %a, %w : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %sum = graph.mse_loss %p, %b {reduction = "sum"} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
  %m = graph.reduce_mean %p {axes = array<i64>, keepdim = false} : (tensor<4x3xf32>) -> tensor<f32>
  %half = graph.constant dense<5.000000e-01> : tensor<f32>
  %hm = graph.mul %half, %m : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ww = graph.mul %w, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %pen = graph.reduce_sum %ww {axes = array<i64>, keepdim = false} : (tensor<3xf32>) -> tensor<f32>
  %t1 = graph.add %sum, %hm : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %t2 = graph.sub %t1, %pen : (tensor<f32>, tensor<f32>) -> tensor<f32>
  graph.loss %t2 : tensor<f32>
}

// -----

graph.model @product phase "train" {
  %a = graph.input "a" : tensor<4x3xf32>
  %m = graph.reduce_mean %a {axes = array<i64>, keepdim = false} : (tensor<4x3xf32>) -> tensor<f32>
  // expected-error @below {{the loss must be a sum of terms c * L (LANGUAGE.md 9), with c a constant or a scalar state and L a mean or a sum over the batch; this product multiplies two values that depend on the batch or on a parameter}}
  %sq = graph.mul %m, %m : (tensor<f32>, tensor<f32>) -> tensor<f32>
  graph.loss %sq : tensor<f32>
}

// -----

graph.model @log phase "train" {
  %a = graph.input "a" : tensor<4x3xf32>
  %m = graph.reduce_mean %a {axes = array<i64>, keepdim = false} : (tensor<4x3xf32>) -> tensor<f32>
  // expected-error @below {{'graph.log' of a batch reduction is not such a term}}
  %l = graph.log %m : (tensor<f32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

graph.model @partial phase "train" {
  %a = graph.input "a" : tensor<4x3xf32>
  %m = graph.reduce_mean %a {axes = array<i64: 0>, keepdim = false} : (tensor<4x3xf32>) -> tensor<3xf32>
  // expected-error @below {{this reduction's operand already combines the samples of the batch}}
  %s = graph.reduce_sum %m {axes = array<i64>, keepdim = false} : (tensor<3xf32>) -> tensor<f32>
  graph.loss %s : tensor<f32>
}

