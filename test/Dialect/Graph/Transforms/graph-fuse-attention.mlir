// RUN: sinter-opt %s -graph-fuse-attention -canonicalize -split-input-file | FileCheck %s

// softmax(q k^T / sqrt(16), masked where key j comes after query i) @ v is
// causal attention; the mask is the `j > i` of two aranges, and its fill
// -1e9. Scaled by 1/4 instead of divided, and without a mask, it is plain
// attention.
// CHECK-LABEL: graph.model @m
// CHECK:       %[[C:.*]] = graph.attention %q, %k, %v {causal = true}
// CHECK:       %[[P:.*]] = graph.attention %q, %k, %v {causal = false}
// CHECK-NOT:   graph.softmax
// CHECK-NOT:   graph.matmul
graph.model @m phase "train" {
  %q = graph.input "q" : tensor<2x4x8x16xf32>
  %k = graph.input "k" : tensor<2x4x8x16xf32>
  %v = graph.param "v" {init = "normal", init_args = array<f64: 0.0, 1.0>} : tensor<2x4x8x16xf32>
  %0 = graph.arange : tensor<8xi64>
  %1 = graph.reshape %0 : (tensor<8xi64>) -> tensor<1x8xi64>
  %2 = graph.arange : tensor<8xi64>
  %3 = graph.reshape %2 : (tensor<8xi64>) -> tensor<8x1xi64>
  %4 = graph.compare %1, %3 {predicate = "gt"} : (tensor<1x8xi64>, tensor<8x1xi64>) -> tensor<8x8xi1>
  %5 = graph.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x8x16xf32>) -> tensor<2x4x16x8xf32>
  %6 = graph.matmul %q, %5 : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %7 = graph.constant dense<4.000000e+00> : tensor<f32>
  %8 = graph.div %6, %7 : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %9 = graph.constant dense<-1.000000e+09> : tensor<f32>
  %10 = graph.where %4, %9, %8 : (tensor<8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %11 = graph.softmax %10 {axis = 3 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %12 = graph.matmul %11, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %15 = graph.constant dense<2.500000e-01> : tensor<f32>
  %16 = graph.mul %6, %15 : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %17 = graph.softmax %16 {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %18 = graph.matmul %17, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %20 = graph.reduce_mean %12 {axes = array<i64>, keepdim = false} : (tensor<2x4x8x16xf32>) -> tensor<f32>
  %21 = graph.reduce_mean %18 {axes = array<i64>, keepdim = false} : (tensor<2x4x8x16xf32>) -> tensor<f32>
  %22 = graph.add %20, %21 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  graph.loss %22 : tensor<f32>
}

// -----

// Not attention: a scale other than 1/sqrt(D), a mask that also hides the
// diagonal (j >= i), a fill whose exponential is not 0.
// CHECK-LABEL: graph.model @not
// CHECK-NOT:   graph.attention
// CHECK-COUNT-3: graph.softmax
graph.model @not phase "train" {
  %q = graph.input "q" : tensor<2x8x16xf32>
  %k = graph.input "k" : tensor<2x8x16xf32>
  %v = graph.param "v" {init = "normal", init_args = array<f64: 0.0, 1.0>} : tensor<2x8x16xf32>
  %0 = graph.arange : tensor<8xi64>
  %1 = graph.reshape %0 : (tensor<8xi64>) -> tensor<1x8xi64>
  %3 = graph.reshape %0 : (tensor<8xi64>) -> tensor<8x1xi64>
  %ge = graph.compare %1, %3 {predicate = "ge"} : (tensor<1x8xi64>, tensor<8x1xi64>) -> tensor<8x8xi1>
  %gt = graph.compare %1, %3 {predicate = "gt"} : (tensor<1x8xi64>, tensor<8x1xi64>) -> tensor<8x8xi1>
  %5 = graph.transpose %k {permutation = array<i64: 0, 2, 1>} : (tensor<2x8x16xf32>) -> tensor<2x16x8xf32>
  %6 = graph.matmul %q, %5 : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %c = graph.constant dense<3.000000e-01> : tensor<f32>
  %a = graph.mul %6, %c : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %pa = graph.softmax %a {axis = -1 : i64} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %oa = graph.matmul %pa, %v : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %quarter = graph.constant dense<2.500000e-01> : tensor<f32>
  %s = graph.mul %6, %quarter : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %big = graph.constant dense<-1.000000e+09> : tensor<f32>
  %b = graph.where %ge, %big, %s : (tensor<8x8xi1>, tensor<f32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %pb = graph.softmax %b {axis = -1 : i64} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %ob = graph.matmul %pb, %v : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %one = graph.constant dense<-1.000000e+00> : tensor<f32>
  %w = graph.where %gt, %one, %s : (tensor<8x8xi1>, tensor<f32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %pc = graph.softmax %w {axis = -1 : i64} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %oc = graph.matmul %pc, %v : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %ma = graph.reduce_mean %oa {axes = array<i64>, keepdim = false} : (tensor<2x8x16xf32>) -> tensor<f32>
  %mb = graph.reduce_mean %ob {axes = array<i64>, keepdim = false} : (tensor<2x8x16xf32>) -> tensor<f32>
  %mc = graph.reduce_mean %oc {axes = array<i64>, keepdim = false} : (tensor<2x8x16xf32>) -> tensor<f32>
  %l1 = graph.add %ma, %mb : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %l = graph.add %l1, %mc : (tensor<f32>, tensor<f32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// A key and value shared by the heads ([2, 1, 8, 16], broadcast by the
// matmuls) are not graph.attention's one set of batch dimensions: the
// spelled-out form stays.
// CHECK-LABEL: graph.model @shared_kv
// CHECK-NOT:   graph.attention
// CHECK:       graph.softmax
graph.model @shared_kv phase "train" {
  %q = graph.input "q" : tensor<2x4x8x16xf32>
  %k = graph.input "k" : tensor<2x1x8x16xf32>
  %v = graph.input "v" : tensor<2x1x8x16xf32>
  %5 = graph.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x1x8x16xf32>) -> tensor<2x1x16x8xf32>
  %6 = graph.matmul %q, %5 : (tensor<2x4x8x16xf32>, tensor<2x1x16x8xf32>) -> tensor<2x4x8x8xf32>
  %15 = graph.constant dense<2.500000e-01> : tensor<f32>
  %16 = graph.mul %6, %15 : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %17 = graph.softmax %16 {axis = -1 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %18 = graph.matmul %17, %v : (tensor<2x4x8x8xf32>, tensor<2x1x8x16xf32>) -> tensor<2x4x8x16xf32>
  %21 = graph.reduce_mean %18 {axes = array<i64>, keepdim = false} : (tensor<2x4x8x16xf32>) -> tensor<f32>
  graph.loss %21 : tensor<f32>
}
