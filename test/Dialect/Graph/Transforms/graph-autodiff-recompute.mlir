// RUN: sinter-opt %s -graph-autodiff -split-input-file -verify-diagnostics | FileCheck %s

// A block marked sinter.recompute = "selective" keeps only what matmuls,
// convolutions and attention compute: the forward call returns the two
// products c and o, and the backward function computes n = c * s, the ReLU
// r (which o's weight gradient reads) and q = o + c (which the last ReLU's
// gradient reads) again. Without the mark, r and q are saved (see
// graph-autodiff.mlir, block @m.n).

// CHECK-LABEL: func.func private @m.sel.fwd(
// CHECK:         %[[C:.*]] = graph.matmul %arg0, %arg1
// CHECK:         %[[O:.*]] = graph.matmul
// CHECK:         return %{{.*}}, %[[C]], %[[O]] :
// CHECK-LABEL: func.func private @m.sel.bwd(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[S:[a-z0-9]+]]: tensor<8xf32>, %[[V:[a-z0-9]+]]: tensor<8x8xf32>, %[[BC:[a-z0-9]+]]: tensor<4x8xf32>, %[[BO:[a-z0-9]+]]: tensor<4x8xf32>, %[[G:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[N:.*]] = graph.mul %[[BC]], %[[S]]
// CHECK:         %[[R:.*]] = graph.maximum %[[N]],
// CHECK-NEXT:    %[[Q:.*]] = graph.add %[[BO]], %[[BC]]
// CHECK:         graph.compare %[[Q]],
// CHECK:         graph.transpose %[[R]]
// CHECK-LABEL: graph.model @m
// CHECK:         %[[F:.*]]:3 = func.call @m.sel.fwd(%x, %sel.0.w, %sel.0.s, %sel.0.v)
// CHECK:         func.call @m.sel.bwd(%x, %sel.0.s, %sel.0.v, %[[F]]#1, %[[F]]#2, %{{.*}})
func.func private @m.sel(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %s: tensor<8xf32>, %v: tensor<8x8xf32>) -> tensor<4x8xf32> attributes {sinter.block = "sel", sinter.recompute = "selective"} {
  %c = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %n = graph.mul %c, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = graph.constant dense<0.000000e+00> : tensor<f32>
  %r = graph.maximum %n, %z : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %o = graph.matmul %r, %v : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %q = graph.add %o, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = graph.maximum %q, %z : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
graph.model @m phase "train" {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "sel.0.w" {init = "ones", init_args = array<f64>} : tensor<8x8xf32>
  %s = graph.param "sel.0.s" {init = "ones", init_args = array<f64>} : tensor<8xf32>
  %v = graph.param "sel.0.v" {init = "ones", init_args = array<f64>} : tensor<8x8xf32>
  %h = func.call @m.sel(%x, %w, %s, %v) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %l = graph.reduce_sum %h {axes = array<i64>, keepdim = false} : (tensor<4x8xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// sinter.recompute = "full" keeps nothing but the block's arguments: the
// forward call returns the block's result alone, and the backward function
// runs the whole forward pass again (both matmuls) before the gradients.

// CHECK-LABEL: func.func private @m.full.fwd(
// CHECK:         return %{{[0-9]+}} : tensor<4x8xf32>
// CHECK-LABEL: func.func private @m.full.bwd(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x8xf32>, %[[S:[a-z0-9]+]]: tensor<8xf32>, %[[V:[a-z0-9]+]]: tensor<8x8xf32>, %[[G:[a-z0-9]+]]: tensor<4x8xf32>)
// CHECK-NEXT:    %[[C:.*]] = graph.matmul %[[X]], %[[W]]
// CHECK-NEXT:    graph.mul %[[C]], %[[S]]
// CHECK:         %[[O:.*]] = graph.matmul %{{.*}}, %[[V]]
// CHECK-NEXT:    graph.add %[[O]], %[[C]]
// CHECK-LABEL: graph.model @m
// CHECK:         %[[F:.*]] = func.call @m.full.fwd(%x, %full.0.w, %full.0.s, %full.0.v)
// CHECK:         func.call @m.full.bwd(%x, %full.0.w, %full.0.s, %full.0.v, %{{.*}})
func.func private @m.full(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %s: tensor<8xf32>, %v: tensor<8x8xf32>) -> tensor<4x8xf32> attributes {sinter.block = "full", sinter.recompute = "full"} {
  %c = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %n = graph.mul %c, %s : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = graph.constant dense<0.000000e+00> : tensor<f32>
  %r = graph.maximum %n, %z : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %o = graph.matmul %r, %v : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %q = graph.add %o, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %t = graph.maximum %q, %z : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
graph.model @m phase "train" {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "full.0.w" {init = "ones", init_args = array<f64>} : tensor<8x8xf32>
  %s = graph.param "full.0.s" {init = "ones", init_args = array<f64>} : tensor<8xf32>
  %v = graph.param "full.0.v" {init = "ones", init_args = array<f64>} : tensor<8x8xf32>
  %h = func.call @m.full(%x, %w, %s, %v) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %l = graph.reduce_sum %h {axes = array<i64>, keepdim = false} : (tensor<4x8xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// Even under "full", a block's result that the backward pass reads is read
// from the forward call (its caller holds it), and a sum across ranks is
// kept rather than run again: m and the all-reduced a cross, only m * a is
// recomputed, and the backward function's one graph.all_reduce_sum is the
// gradient's.

// CHECK-LABEL: func.func private @m.k.fwd(
// CHECK:         %[[M:.*]] = graph.maximum %arg0, %arg1
// CHECK:         %[[A:.*]] = graph.all_reduce_sum %[[M]]
// CHECK:         return %[[M]], %{{.*}}, %[[A]] :
// CHECK-LABEL: func.func private @m.k.bwd(
// CHECK-SAME:    %{{[a-z0-9]+}}: tensor<4xf32>, %{{[a-z0-9]+}}: tensor<4xf32>, %[[BM:[a-z0-9]+]]: tensor<4xf32>, %[[BA:[a-z0-9]+]]: tensor<4xf32>,
// CHECK-NEXT:    graph.mul %[[BM]], %[[BA]]
// CHECK-NOT:     graph.maximum %
// CHECK:         graph.all_reduce_sum
// CHECK-NOT:     graph.all_reduce_sum
// CHECK-NOT:     graph.maximum %
// CHECK:         return
func.func private @m.k(%x: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {sinter.block = "k", sinter.recompute = "full"} {
  %m = graph.maximum %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = graph.all_reduce_sum %m : tensor<4xf32>
  %p = graph.mul %m, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = graph.mul %p, %m : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %m, %r : tensor<4xf32>, tensor<4xf32>
}
graph.model @m phase "train" {
  %x = graph.input "x" : tensor<4xf32>
  %w = graph.param "k.0.w" {init = "ones", init_args = array<f64>} : tensor<4xf32>
  %h:2 = func.call @m.k(%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %s = graph.add %h#0, %h#1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = graph.reduce_sum %s {axes = array<i64>, keepdim = false} : (tensor<4xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// expected-error @+1 {{sinter.recompute is "some"; expected "selective" or "full"}}
func.func private @m.b(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> attributes {sinter.block = "b", sinter.recompute = "some"} {
  %y = graph.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
graph.model @m phase "train" {
  %x = graph.input "x" : tensor<4xf32>
  %w = graph.param "b.0.w" {init = "ones", init_args = array<f64>} : tensor<4xf32>
  %h = func.call @m.b(%x, %w) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = graph.reduce_sum %h {axes = array<i64>, keepdim = false} : (tensor<4xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
