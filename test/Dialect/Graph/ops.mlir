// RUN: sinter-opt %s | sinter-opt | FileCheck %s
// RUN: sinter-opt %s --mlir-print-op-generic | sinter-opt | FileCheck %s

// Every graph op, printed and parsed back.

// CHECK-LABEL: graph.model @mlp phase "train" {
graph.model @mlp phase "train" {
  // CHECK-NEXT: %[[X:.*]] = graph.input "x" : tensor<?x64xf32>
  // CHECK-NEXT: %[[Y:.*]] = graph.input "y" : tensor<?xi32>
  %x = graph.input "x" : tensor<?x64xf32>
  %y = graph.input "y" : tensor<?xi32>
  // CHECK-NEXT: %[[W:.*]] = graph.param "fc1.weight" {init = "kaiming_uniform", init_args = array<f64: 6.400000e+01, 2.2360679774997898>} : tensor<10x64xf32>
  // CHECK-NEXT: %[[B:.*]] = graph.param "fc1.bias" {init = "zeros", init_args = array<f64>} : tensor<10xf32>
  // CHECK-NEXT: %[[N:.*]] = graph.state "steps" {init = "constant", init_args = array<f64: 0.000000e+00>} : tensor<i64>
  %w = graph.param "fc1.weight" {init = "kaiming_uniform", init_args = array<f64: 64.0, 2.2360679774997898>} : tensor<10x64xf32>
  %b = graph.param "fc1.bias" {init = "zeros", init_args = array<f64>} : tensor<10xf32>
  %n = graph.state "steps" {init = "constant", init_args = array<f64: 0.0>} : tensor<i64>
  // CHECK-NEXT: %[[WT:.*]] = graph.transpose %[[W]] {permutation = array<i64: 1, 0>} : (tensor<10x64xf32>) -> tensor<64x10xf32>
  // CHECK-NEXT: %[[MM:.*]] = graph.matmul %[[X]], %[[WT]] : (tensor<?x64xf32>, tensor<64x10xf32>) -> tensor<?x10xf32>
  // CHECK-NEXT: %[[LOGITS:.*]] = graph.add %[[MM]], %[[B]] : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %wt = graph.transpose %w {permutation = array<i64: 1, 0>} : (tensor<10x64xf32>) -> tensor<64x10xf32>
  %mm = graph.matmul %x, %wt : (tensor<?x64xf32>, tensor<64x10xf32>) -> tensor<?x10xf32>
  %logits = graph.add %mm, %b : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  // CHECK-NEXT: %[[L:.*]] = graph.cross_entropy %[[LOGITS]], %[[Y]] {ignore_index = -1 : i64, label_smoothing = 1.000000e-01 : f64, reduction = "mean"} : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  // CHECK-NEXT: graph.loss %[[L]] : tensor<f32>
  %l = graph.cross_entropy %logits, %y {ignore_index = -1 : i64, label_smoothing = 0.1 : f64, reduction = "mean"} : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
  // CHECK-NEXT: %[[A:.*]] = graph.accuracy %[[LOGITS]], %[[Y]] : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  // CHECK-NEXT: graph.metric "accuracy", %[[A]] : tensor<f32>
  %a = graph.accuracy %logits, %y : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  graph.metric "accuracy", %a : tensor<f32>
  // CHECK-NEXT: %[[ONE:.*]] = graph.constant dense<1> : tensor<i64>
  // CHECK-NEXT: %[[N1:.*]] = graph.add %[[N]], %[[ONE]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
  // CHECK-NEXT: graph.state_update "steps", %[[N1]] : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %n1 = graph.add %n, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
  graph.state_update "steps", %n1 : tensor<i64>
}

// An evaluation model may have no loss; inputs may be of any dtype.
// CHECK-LABEL: graph.model @eval_only phase "eval" {
// CHECK-NEXT: graph.input "mask" : tensor<?x8xi1>
// CHECK-NEXT: graph.state "counter" {init = "ones", init_args = array<f64>} : tensor<2xi32>
// CHECK-NEXT: }
graph.model @eval_only phase "eval" {
  %m = graph.input "mask" : tensor<?x8xi1>
  %c = graph.state "counter" {init = "ones", init_args = array<f64>} : tensor<2xi32>
}

// CHECK-LABEL: graph.model @initializers
// CHECK: init = "normal", init_args = array<f64: 0.000000e+00, 2.000000e-02>} : tensor<50x16xf32>
// CHECK: init = "uniform", init_args = array<f64: -1.000000e+00, 1.000000e+00>} : tensor<4xbf16>
// CHECK: init = "trunc_normal", init_args = array<f64: 0.000000e+00, 1.000000e+00, -2.000000e+00, 2.000000e+00>} : tensor<4xf16>
// CHECK: init = "kaiming_normal", init_args = array<f64: 2.700000e+01, 1.4142135623730951>} : tensor<16x3x3x3xf64>
// CHECK: init = "xavier_uniform", init_args = array<f64: 1.600000e+01, 3.200000e+01>} : tensor<32x16xf32>
// CHECK: init = "ones", init_args = array<f64>} : tensor<16xf32>
graph.model @initializers phase "train" {
  %0 = graph.param "wte" {init = "normal", init_args = array<f64: 0.0, 0.02>} : tensor<50x16xf32>
  %1 = graph.param "u" {init = "uniform", init_args = array<f64: -1.0, 1.0>} : tensor<4xbf16>
  %2 = graph.param "t" {init = "trunc_normal", init_args = array<f64: 0.0, 1.0, -2.0, 2.0>} : tensor<4xf16>
  %3 = graph.param "conv.weight" {init = "kaiming_normal", init_args = array<f64: 27.0, 1.4142135623730951>} : tensor<16x3x3x3xf64>
  %4 = graph.param "proj.weight" {init = "xavier_uniform", init_args = array<f64: 16.0, 32.0>} : tensor<32x16xf32>
  %5 = graph.state "bn.running_var" {init = "ones", init_args = array<f64>} : tensor<16xf32>
}

// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.*]]: tensor<4x1xf32>, %[[Y:.*]]: tensor<3xf32>, %[[I:.*]]: tensor<4xi32>, %[[C:.*]]: tensor<4x1xi1>)
func.func @elementwise(%x: tensor<4x1xf32>, %y: tensor<3xf32>, %i: tensor<4xi32>, %c: tensor<4x1xi1>) {
  // CHECK: graph.add %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: graph.sub %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: graph.mul %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: graph.div %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: graph.pow %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: graph.maximum %[[X]], %[[Y]] : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: graph.minimum %[[I]], %[[I]] : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %0 = graph.add %x, %y : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %1 = graph.sub %x, %y : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %2 = graph.mul %x, %y : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %3 = graph.div %x, %y : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %4 = graph.pow %x, %y : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %5 = graph.maximum %x, %y : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %6 = graph.minimum %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  // CHECK: %[[CMP:.*]] = graph.compare %[[X]], %[[Y]] {predicate = "lt"} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  // CHECK: graph.compare %[[CMP]], %[[C]] {predicate = "ne"} : (tensor<4x3xi1>, tensor<4x1xi1>) -> tensor<4x3xi1>
  // CHECK: graph.where %[[C]], %[[X]], %[[Y]] : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %7 = graph.compare %x, %y {predicate = "lt"} : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xi1>
  %8 = graph.compare %7, %c {predicate = "ne"} : (tensor<4x3xi1>, tensor<4x1xi1>) -> tensor<4x3xi1>
  %9 = graph.where %c, %x, %y : (tensor<4x1xi1>, tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  // CHECK: graph.neg %[[I]] : (tensor<4xi32>) -> tensor<4xi32>
  // CHECK: graph.abs %[[I]] : (tensor<4xi32>) -> tensor<4xi32>
  // CHECK: graph.relu %[[I]] : (tensor<4xi32>) -> tensor<4xi32>
  // CHECK: graph.neg %[[Y]] : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.exp %[[Y]] : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.log %[[Y]] : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.sqrt %[[Y]] : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.rsqrt %[[Y]] : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.abs %[[Y]] : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.tanh %[[Y]] : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.sigmoid %[[Y]] : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.relu %[[Y]] : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.silu %[[Y]] : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.gelu %[[Y]] {approximate = "none"} : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.gelu %[[Y]] {approximate = "tanh"} : (tensor<3xf32>) -> tensor<3xf32>
  %10 = graph.neg %i : (tensor<4xi32>) -> tensor<4xi32>
  %11 = graph.abs %i : (tensor<4xi32>) -> tensor<4xi32>
  %12 = graph.relu %i : (tensor<4xi32>) -> tensor<4xi32>
  %13 = graph.neg %y : (tensor<3xf32>) -> tensor<3xf32>
  %14 = graph.exp %y : (tensor<3xf32>) -> tensor<3xf32>
  %15 = graph.log %y : (tensor<3xf32>) -> tensor<3xf32>
  %16 = graph.sqrt %y : (tensor<3xf32>) -> tensor<3xf32>
  %17 = graph.rsqrt %y : (tensor<3xf32>) -> tensor<3xf32>
  %18 = graph.abs %y : (tensor<3xf32>) -> tensor<3xf32>
  %19 = graph.tanh %y : (tensor<3xf32>) -> tensor<3xf32>
  %20 = graph.sigmoid %y : (tensor<3xf32>) -> tensor<3xf32>
  %21 = graph.relu %y : (tensor<3xf32>) -> tensor<3xf32>
  %22 = graph.silu %y : (tensor<3xf32>) -> tensor<3xf32>
  %23 = graph.gelu %y {approximate = "none"} : (tensor<3xf32>) -> tensor<3xf32>
  %24 = graph.gelu %y {approximate = "tanh"} : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: graph.cast %[[I]] : (tensor<4xi32>) -> tensor<4xf32>
  // CHECK: graph.cast %[[C]] : (tensor<4x1xi1>) -> tensor<4x1xbf16>
  %25 = graph.cast %i : (tensor<4xi32>) -> tensor<4xf32>
  %26 = graph.cast %c : (tensor<4x1xi1>) -> tensor<4x1xbf16>
  // CHECK: graph.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf64>
  %27 = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf64>
  return
}

// CHECK-LABEL: func.func @shapes
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x6xf32>, %[[Y:.*]]: tensor<2x6x5xf32>, %[[Z:.*]]: tensor<6x5xf32>, %[[IDS:.*]]: tensor<?x3xi64>)
func.func @shapes(%x: tensor<2x4x6xf32>, %y: tensor<2x6x5xf32>, %z: tensor<6x5xf32>, %ids: tensor<?x3xi64>) {
  // CHECK: graph.matmul %[[X]], %[[Y]] : (tensor<2x4x6xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
  // CHECK: graph.matmul %[[X]], %[[Z]] : (tensor<2x4x6xf32>, tensor<6x5xf32>) -> tensor<2x4x5xf32>
  %0 = graph.matmul %x, %y : (tensor<2x4x6xf32>, tensor<2x6x5xf32>) -> tensor<2x4x5xf32>
  %1 = graph.matmul %x, %z : (tensor<2x4x6xf32>, tensor<6x5xf32>) -> tensor<2x4x5xf32>
  // CHECK: graph.reshape %[[X]] : (tensor<2x4x6xf32>) -> tensor<8x6xf32>
  // CHECK: graph.reshape %[[IDS]] : (tensor<?x3xi64>) -> tensor<?xi64>
  %2 = graph.reshape %x : (tensor<2x4x6xf32>) -> tensor<8x6xf32>
  %3 = graph.reshape %ids : (tensor<?x3xi64>) -> tensor<?xi64>
  // CHECK: graph.transpose %[[X]] {permutation = array<i64: 0, 2, 1>} : (tensor<2x4x6xf32>) -> tensor<2x6x4xf32>
  %4 = graph.transpose %x {permutation = array<i64: 0, 2, 1>} : (tensor<2x4x6xf32>) -> tensor<2x6x4xf32>
  // CHECK: graph.concat %[[X]], %[[X]], %[[X]] {axis = -1 : i64} : (tensor<2x4x6xf32>, tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x18xf32>
  // CHECK: graph.concat %[[Z]] {axis = 0 : i64} : (tensor<6x5xf32>) -> tensor<6x5xf32>
  %5 = graph.concat %x, %x, %x {axis = -1 : i64} : (tensor<2x4x6xf32>, tensor<2x4x6xf32>, tensor<2x4x6xf32>) -> tensor<2x4x18xf32>
  %6 = graph.concat %z {axis = 0 : i64} : (tensor<6x5xf32>) -> tensor<6x5xf32>
  // CHECK: graph.slice %[[X]] {axis = 2 : i64, end = -1 : i64, start = 1 : i64} : (tensor<2x4x6xf32>) -> tensor<2x4x4xf32>
  // CHECK: graph.slice %[[IDS]] {axis = 0 : i64, end = 2 : i64, start = 0 : i64} : (tensor<?x3xi64>) -> tensor<2x3xi64>
  %7 = graph.slice %x {axis = 2 : i64, start = 1 : i64, end = -1 : i64} : (tensor<2x4x6xf32>) -> tensor<2x4x4xf32>
  %8 = graph.slice %ids {axis = 0 : i64, start = 0 : i64, end = 2 : i64} : (tensor<?x3xi64>) -> tensor<2x3xi64>
  // CHECK: graph.arange : tensor<8xi64>
  // CHECK: graph.arange : tensor<?xi64>
  %9 = graph.arange : tensor<8xi64>
  %10 = graph.arange : tensor<?xi64>
  // CHECK: graph.one_hot %[[IDS]] {num_classes = 10 : i64} : (tensor<?x3xi64>) -> tensor<?x3x10xf32>
  %11 = graph.one_hot %ids {num_classes = 10 : i64} : (tensor<?x3xi64>) -> tensor<?x3x10xf32>
  return
}

// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:.*]]: tensor<4x3x5xf32>, %[[I:.*]]: tensor<4x3xi64>)
func.func @reductions(%x: tensor<4x3x5xf32>, %i: tensor<4x3xi64>) {
  // CHECK: graph.reduce_sum %[[X]] {axes = array<i64: 1>, keepdim = false} : (tensor<4x3x5xf32>) -> tensor<4x5xf32>
  // CHECK: graph.reduce_sum %[[I]] {axes = array<i64>, keepdim = false} : (tensor<4x3xi64>) -> tensor<i64>
  // CHECK: graph.reduce_mean %[[X]] {axes = array<i64: 0, -1>, keepdim = true} : (tensor<4x3x5xf32>) -> tensor<1x3x1xf32>
  // CHECK: graph.reduce_max %[[X]] {axes = array<i64: 2>, keepdim = true} : (tensor<4x3x5xf32>) -> tensor<4x3x1xf32>
  // CHECK: graph.reduce_min %[[I]] {axes = array<i64: 0>, keepdim = false} : (tensor<4x3xi64>) -> tensor<3xi64>
  %0 = graph.reduce_sum %x {axes = array<i64: 1>, keepdim = false} : (tensor<4x3x5xf32>) -> tensor<4x5xf32>
  %1 = graph.reduce_sum %i {axes = array<i64>, keepdim = false} : (tensor<4x3xi64>) -> tensor<i64>
  %2 = graph.reduce_mean %x {axes = array<i64: 0, -1>, keepdim = true} : (tensor<4x3x5xf32>) -> tensor<1x3x1xf32>
  %3 = graph.reduce_max %x {axes = array<i64: 2>, keepdim = true} : (tensor<4x3x5xf32>) -> tensor<4x3x1xf32>
  %4 = graph.reduce_min %i {axes = array<i64: 0>, keepdim = false} : (tensor<4x3xi64>) -> tensor<3xi64>
  // CHECK: graph.softmax %[[X]] {axis = -1 : i64} : (tensor<4x3x5xf32>) -> tensor<4x3x5xf32>
  // CHECK: graph.log_softmax %[[X]] {axis = 1 : i64} : (tensor<4x3x5xf32>) -> tensor<4x3x5xf32>
  %5 = graph.softmax %x {axis = -1 : i64} : (tensor<4x3x5xf32>) -> tensor<4x3x5xf32>
  %6 = graph.log_softmax %x {axis = 1 : i64} : (tensor<4x3x5xf32>) -> tensor<4x3x5xf32>
  return
}

// CHECK-LABEL: func.func @nn
// CHECK-SAME: (%[[X:.*]]: tensor<?x4x32x32xf32>, %[[W:.*]]: tensor<16x2x3x3xf32>, %[[IDS:.*]]: tensor<?x8xi32>, %[[T:.*]]: tensor<50x16xf32>, %[[Q:.*]]: tensor<?x4x8x16xf32>, %[[V:.*]]: tensor<?x4x8x32xf32>, %[[QKV:.*]]: tensor<2x8x192xf32>)
func.func @nn(%x: tensor<?x4x32x32xf32>, %w: tensor<16x2x3x3xf32>, %ids: tensor<?x8xi32>, %table: tensor<50x16xf32>, %q: tensor<?x4x8x16xf32>, %v: tensor<?x4x8x32xf32>, %qkv: tensor<2x8x192xf32>) {
  // CHECK: graph.conv2d %[[X]], %[[W]] {dilation = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<?x4x32x32xf32>, tensor<16x2x3x3xf32>) -> tensor<?x16x16x16xf32>
  %0 = graph.conv2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>, groups = 2 : i64} : (tensor<?x4x32x32xf32>, tensor<16x2x3x3xf32>) -> tensor<?x16x16x16xf32>
  // CHECK: graph.max_pool2d %[[X]] {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1>, stride = array<i64: 2, 2>} : (tensor<?x4x32x32xf32>) -> tensor<?x4x16x16xf32>
  // CHECK: graph.avg_pool2d %[[X]] {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>} : (tensor<?x4x32x32xf32>) -> tensor<?x4x16x16xf32>
  // CHECK: graph.global_avg_pool2d %[[X]] : (tensor<?x4x32x32xf32>) -> tensor<?x4xf32>
  %1 = graph.max_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<?x4x32x32xf32>) -> tensor<?x4x16x16xf32>
  %2 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : (tensor<?x4x32x32xf32>) -> tensor<?x4x16x16xf32>
  %3 = graph.global_avg_pool2d %x : (tensor<?x4x32x32xf32>) -> tensor<?x4xf32>
  // CHECK: %mean, %var = graph.batch_norm_stats %[[X]] {axes = array<i64: 0, 2, 3>} : (tensor<?x4x32x32xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  // CHECK: %mean_{{[0-9]+}}, %var_{{[0-9]+}} = graph.layer_norm_stats %[[Q]] : (tensor<?x4x8x16xf32>) -> (tensor<?x4x8x1xf32>, tensor<?x4x8x1xf32>)
  %mean, %var = graph.batch_norm_stats %x {axes = array<i64: 0, 2, 3>} : (tensor<?x4x32x32xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %lmean, %lvar = graph.layer_norm_stats %q : (tensor<?x4x8x16xf32>) -> (tensor<?x4x8x1xf32>, tensor<?x4x8x1xf32>)
  // CHECK: graph.embedding %[[IDS]], %[[T]] : (tensor<?x8xi32>, tensor<50x16xf32>) -> tensor<?x8x16xf32>
  // CHECK: graph.dropout %[[Q]] {p = 1.000000e-01 : f64} : (tensor<?x4x8x16xf32>) -> tensor<?x4x8x16xf32>
  // CHECK: graph.attention %[[Q]], %[[Q]], %[[V]] {causal = true} : (tensor<?x4x8x16xf32>, tensor<?x4x8x16xf32>, tensor<?x4x8x32xf32>) -> tensor<?x4x8x32xf32>
  %4 = graph.embedding %ids, %table : (tensor<?x8xi32>, tensor<50x16xf32>) -> tensor<?x8x16xf32>
  %5 = graph.dropout %q {p = 0.1 : f64} : (tensor<?x4x8x16xf32>) -> tensor<?x4x8x16xf32>
  %6 = graph.attention %q, %q, %v {causal = true} : (tensor<?x4x8x16xf32>, tensor<?x4x8x16xf32>, tensor<?x4x8x32xf32>) -> tensor<?x4x8x32xf32>
  // CHECK: graph.attention_grad %[[Q]], %[[Q]], %[[V]], %{{.*}} {causal = true} : tensor<?x4x8x16xf32>, tensor<?x4x8x16xf32>, tensor<?x4x8x32xf32>, tensor<?x4x8x32xf32>
  %dq, %dk, %dv = graph.attention_grad %q, %q, %v, %6 {causal = true} : tensor<?x4x8x16xf32>, tensor<?x4x8x16xf32>, tensor<?x4x8x32xf32>, tensor<?x4x8x32xf32>
  // CHECK: %[[PY:.*]], %[[LSE:.*]] = graph.attention_qkv %[[QKV]] {causal = true, heads = 4 : i64} : (tensor<2x8x192xf32>) -> (tensor<2x8x64xf32>, tensor<2x4x8xf32>)
  %py, %lse = graph.attention_qkv %qkv {causal = true, heads = 4 : i64} : (tensor<2x8x192xf32>) -> (tensor<2x8x64xf32>, tensor<2x4x8xf32>)
  // CHECK: graph.attention_qkv_grad %[[QKV]], %[[PY]], %[[LSE]], %[[PY]] {causal = true, heads = 4 : i64} : tensor<2x8x192xf32>, tensor<2x8x64xf32>, tensor<2x4x8xf32>, tensor<2x8x64xf32>
  %dqkv = graph.attention_qkv_grad %qkv, %py, %lse, %py {causal = true, heads = 4 : i64} : tensor<2x8x192xf32>, tensor<2x8x64xf32>, tensor<2x4x8xf32>, tensor<2x8x64xf32>
  // CHECK: %[[BN:result[_0-9]*]], %mean_{{[0-9]+}}, %var_{{[0-9]+}} = graph.batch_norm %[[X]], %mean, %var {epsilon = 1.000000e-05 : f64} : (tensor<?x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: graph.batch_norm_grad %[[X]], %mean, %mean_{{[0-9]+}}, %var_{{[0-9]+}}, %[[BN]] {epsilon = 1.000000e-05 : f64} : tensor<?x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?x4x32x32xf32>
  %y, %bmean, %bvar = graph.batch_norm %x, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<?x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>)
  %dx, %dw, %db = graph.batch_norm_grad %x, %mean, %bmean, %bvar, %y {epsilon = 1.0e-05 : f64} : tensor<?x4x32x32xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<?x4x32x32xf32>
  return
}

// CHECK-LABEL: func.func @losses
// CHECK-SAME: (%[[L:.*]]: tensor<?x8x50xf32>, %[[T:.*]]: tensor<?x8xi64>, %[[A:.*]]: tensor<?x4xf64>, %[[B:.*]]: tensor<?x4xf64>)
func.func @losses(%logits: tensor<?x8x50xf32>, %t: tensor<?x8xi64>, %a: tensor<?x4xf64>, %b: tensor<?x4xf64>) {
  // CHECK: graph.cross_entropy %[[L]], %[[T]] {label_smoothing = 0.000000e+00 : f64, reduction = "none"} : (tensor<?x8x50xf32>, tensor<?x8xi64>) -> tensor<?x8xf32>
  // CHECK: graph.nll_loss %[[L]], %[[T]] {ignore_index = 0 : i64, reduction = "sum"} : (tensor<?x8x50xf32>, tensor<?x8xi64>) -> tensor<f32>
  // CHECK: graph.nll_loss %[[L]], %[[T]] {reduction = "none"} : (tensor<?x8x50xf32>, tensor<?x8xi64>) -> tensor<?x8xf32>
  %0 = graph.cross_entropy %logits, %t {reduction = "none", label_smoothing = 0.0 : f64} : (tensor<?x8x50xf32>, tensor<?x8xi64>) -> tensor<?x8xf32>
  %1 = graph.nll_loss %logits, %t {reduction = "sum", ignore_index = 0 : i64} : (tensor<?x8x50xf32>, tensor<?x8xi64>) -> tensor<f32>
  %2 = graph.nll_loss %logits, %t {reduction = "none"} : (tensor<?x8x50xf32>, tensor<?x8xi64>) -> tensor<?x8xf32>
  // CHECK: graph.mse_loss %[[A]], %[[B]] {reduction = "mean"} : (tensor<?x4xf64>, tensor<?x4xf64>) -> tensor<f64>
  // CHECK: graph.l1_loss %[[A]], %[[B]] {reduction = "none"} : (tensor<?x4xf64>, tensor<?x4xf64>) -> tensor<?x4xf64>
  // CHECK: graph.bce_with_logits %[[A]], %[[B]] {reduction = "sum"} : (tensor<?x4xf64>, tensor<?x4xf64>) -> tensor<f64>
  %3 = graph.mse_loss %a, %b {reduction = "mean"} : (tensor<?x4xf64>, tensor<?x4xf64>) -> tensor<f64>
  %4 = graph.l1_loss %a, %b {reduction = "none"} : (tensor<?x4xf64>, tensor<?x4xf64>) -> tensor<?x4xf64>
  %5 = graph.bce_with_logits %a, %b {reduction = "sum"} : (tensor<?x4xf64>, tensor<?x4xf64>) -> tensor<f64>
  // CHECK: graph.accuracy %[[L]], %[[T]] : (tensor<?x8x50xf32>, tensor<?x8xi64>) -> tensor<f32>
  %6 = graph.accuracy %logits, %t : (tensor<?x8x50xf32>, tensor<?x8xi64>) -> tensor<f32>
  return
}

// A declared result type may be less or more static than the inferred one,
// as long as the two agree up to dynamic dimensions.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x3xf32>, %[[Y:.*]]: tensor<4x1xf32>)
func.func @dynamic(%x: tensor<?x3xf32>, %y: tensor<4x1xf32>) {
  // CHECK: graph.add %[[X]], %[[Y]] : (tensor<?x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  // CHECK: graph.add %[[X]], %[[Y]] : (tensor<?x3xf32>, tensor<4x1xf32>) -> tensor<?x?xf32>
  // CHECK: graph.exp %[[Y]] : (tensor<4x1xf32>) -> tensor<?x1xf32>
  // CHECK: graph.reshape %[[X]] : (tensor<?x3xf32>) -> tensor<6x?xf32>
  %0 = graph.add %x, %y : (tensor<?x3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  %1 = graph.add %x, %y : (tensor<?x3xf32>, tensor<4x1xf32>) -> tensor<?x?xf32>
  %2 = graph.exp %y : (tensor<4x1xf32>) -> tensor<?x1xf32>
  %3 = graph.reshape %x : (tensor<?x3xf32>) -> tensor<6x?xf32>
  return
}

// The frontend creates ops generically; inherent attributes given in the
// discardable dictionary become properties.
// CHECK-LABEL: func.func @generic
// CHECK: graph.compare %{{.*}}, %{{.*}} {predicate = "ge"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
func.func @generic(%x: tensor<2xf32>) {
  %0 = "graph.compare"(%x, %x) {predicate = "ge"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return
}
