// RUN: sinter-opt %s -graph-autodiff -split-input-file -verify-diagnostics -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s

// loss = mean(x * w): dL/dw = sum over the broadcast batch of x / n, built
// from graph ops that keep the forward op's location.
// CHECK-LABEL: graph.model @m phase "train"
// CHECK:       %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK:       graph.reshape %[[ONE]] : (tensor<f32>) -> tensor<1x1xf32> loc("m.sn":5:8)
// CHECK:       %[[G:.*]] = graph.mul %{{.*}}, %x : {{.*}} loc("m.sn":4:9)
// CHECK:       %[[S:.*]] = graph.reduce_sum %[[G]] {axes = array<i64: 0>, keepdim = true} {{.*}} loc("m.sn":4:9)
// CHECK:       %[[R:.*]] = graph.reshape %[[S]] : (tensor<1x3xf32>) -> tensor<3xf32> loc("m.sn":4:9)
// CHECK:       graph.gradient "w", %[[R]] : tensor<3xf32>
// CHECK-NOT:   graph.gradient "s"
// CHECK-LABEL: graph.model @m.eval phase "eval"
// CHECK-NOT:   graph.gradient
graph.model @m phase "train" {
  %x = graph.input "x" : tensor<2x3xf32>
  %w = graph.param "w" {init = "zeros", init_args = array<f64>} : tensor<3xf32>
  %s = graph.state "s" {init = "zeros", init_args = array<f64>} : tensor<3xf32>
  %y = graph.mul %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("m.sn":4:9)
  %z = graph.add %y, %s : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("m.sn":4:9)
  %l = graph.reduce_mean %z {axes = array<i64>, keepdim = false} : (tensor<2x3xf32>) -> tensor<f32> loc("m.sn":5:8)
  graph.loss %l : tensor<f32>
}
graph.model @m.eval phase "eval" {
  %x = graph.input "x" : tensor<2x3xf32>
  %w = graph.param "w" {init = "zeros", init_args = array<f64>} : tensor<3xf32>
  %l = graph.reduce_mean %x {axes = array<i64>, keepdim = false} : (tensor<2x3xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// An op without a gradient on a path from a parameter to the loss is an
// error at that op (second derivatives are not built).
graph.model @n phase "train" {
  %w = graph.param "w" {init = "zeros", init_args = array<f64>} : tensor<1x3x8x8xf32>
  %g = graph.param "g" {init = "zeros", init_args = array<f64>} : tensor<1x3x4x4xf32>
  // expected-error @below {{'graph.pool2d_grad' has no gradient yet, and the loss depends on a parameter through it}}
  %y = graph.pool2d_grad %w, %g {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0>, stride = array<i64: 2, 2>, max = true} : (tensor<1x3x8x8xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  %l = graph.reduce_mean %y {axes = array<i64>, keepdim = false} : (tensor<1x3x8x8xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// A repeated block is differentiated once: every layer calls its forward
// function, and in reverse order its backward function, which reads the
// call's arguments and the forward results it needs (here tanh's result).

// CHECK-LABEL: func.func private @m.b.fwd(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: tensor<4xf32>{{.*}}, %[[W:[a-z0-9]+]]: tensor<4xf32>{{.*}}) -> tensor<4xf32>
// CHECK:         %[[Y:.*]] = graph.mul %[[X]], %[[W]]
// CHECK:         %[[Z:.*]] = graph.tanh %[[Y]]
// CHECK:         return %[[Z]]
// CHECK-LABEL: func.func private @m.b.bwd(
// CHECK-SAME:    %[[BX:[a-z0-9]+]]: tensor<4xf32>{{.*}}, %[[BW:[a-z0-9]+]]: tensor<4xf32>{{.*}}, %[[BZ:[a-z0-9]+]]: tensor<4xf32>{{.*}}, %[[G:[a-z0-9]+]]: tensor<4xf32>{{.*}}) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT:     graph.tanh
// CHECK:         %[[GY:.*]] = graph.mul %[[G]],
// CHECK:         %[[GX:.*]] = graph.mul %[[GY]], %[[BW]]
// CHECK:         %[[GW:.*]] = graph.mul %[[GY]], %[[BX]]
// CHECK:         return %[[GX]], %[[GW]]
// CHECK-NOT:   func.func private @m.b(
// CHECK-LABEL: graph.model @m
// CHECK:         %[[H0:.*]] = func.call @m.b.fwd(%x, %b.0.w)
// CHECK:         %[[H1:.*]] = func.call @m.b.fwd(%[[H0]], %b.1.w)
// CHECK:         %[[D1:.*]]:2 = func.call @m.b.bwd(%[[H0]], %b.1.w, %[[H1]], %{{.*}})
// CHECK:         %[[D0:.*]]:2 = func.call @m.b.bwd(%x, %b.0.w, %[[H0]], %[[D1]]#0)
// CHECK:         graph.gradient "b.0.w", %[[D0]]#1
// CHECK:         graph.gradient "b.1.w", %[[D1]]#1
func.func private @m.b(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> attributes {sinter.block = "b"} {
  %y = graph.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %z = graph.tanh %y : (tensor<4xf32>) -> tensor<4xf32>
  return %z : tensor<4xf32>
}
graph.model @m phase "train" {
  %x = graph.input "x" : tensor<4xf32>
  %w0 = graph.param "b.0.w" {init = "ones", init_args = array<f64>} : tensor<4xf32>
  %h0 = func.call @m.b(%x, %w0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w1 = graph.param "b.1.w" {init = "ones", init_args = array<f64>} : tensor<4xf32>
  %h1 = func.call @m.b(%h0, %w1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = graph.reduce_sum %h1 {axes = array<i64>, keepdim = false} : (tensor<4xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// Cheap elementwise arithmetic is computed again in the backward function
// instead of being saved, when that saves no more memory and the forward
// pass never writes it: the scaled matmul output n (which only the
// maximum reads) is recomputed from the saved c and the argument s for the
// maximum's gradient. r, which a matmul reads in the forward pass, is
// saved: it is written anyway. q = o + c, whose two operands are both
// large and not arguments, is saved too (saving o and c instead would keep
// more).

// CHECK-LABEL: func.func private @m.n.fwd(
// CHECK:         %[[C:.*]] = graph.matmul %arg0, %arg1
// CHECK:         %[[R:.*]] = graph.maximum
// CHECK:         %[[Q:.*]] = graph.add %{{.*}}, %[[C]]
// CHECK:         %[[T:.*]] = graph.maximum %[[Q]]
// CHECK:         return %[[T]], %[[C]], %[[R]], %[[Q]] :
// CHECK-LABEL: func.func private @m.n.bwd(
// CHECK-SAME:    %[[BX:[a-z0-9]+]]: tensor<4x8xf32>{{.*}}, %[[BS:[a-z0-9]+]]: tensor<8xf32>{{.*}}, %[[BV:[a-z0-9]+]]: tensor<8x8xf32>{{.*}}, %[[BC:[a-z0-9]+]]: tensor<4x8xf32>{{.*}}, %[[BR:[a-z0-9]+]]: tensor<4x8xf32>{{.*}}, %[[BQ:[a-z0-9]+]]: tensor<4x8xf32>{{.*}}, %[[G:[a-z0-9]+]]: tensor<4x8xf32>
// CHECK:         %[[N:.*]] = graph.mul %[[BC]], %[[BS]]
// CHECK-NOT:     graph.maximum
// CHECK:         graph.compare %[[BQ]],
// CHECK:         graph.transpose %[[BR]]
// CHECK:         graph.compare %[[N]],
// CHECK-LABEL: graph.model @m
// CHECK:         %[[F:.*]]:4 = func.call @m.n.fwd(%x, %n.0.w, %n.0.s, %n.0.v)
// CHECK:         func.call @m.n.bwd(%x, %n.0.s, %n.0.v, %[[F]]#1, %[[F]]#2, %[[F]]#3, %{{.*}})
func.func private @m.n(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %s: tensor<8xf32>, %v: tensor<8x8xf32>) -> tensor<4x8xf32> attributes {sinter.block = "n"} {
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
  %w = graph.param "n.0.w" {init = "ones", init_args = array<f64>} : tensor<8x8xf32>
  %s = graph.param "n.0.s" {init = "ones", init_args = array<f64>} : tensor<8xf32>
  %v = graph.param "n.0.v" {init = "ones", init_args = array<f64>} : tensor<8x8xf32>
  %h = func.call @m.n(%x, %w, %s, %v) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %l = graph.reduce_sum %h {axes = array<i64>, keepdim = false} : (tensor<4x8xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// A bias added to a matmul's product is saved, not computed again: the
// matmul call adds it as it writes the product (sinter-matmul-bias), so the
// sum is written anyway and the product alone never is.

// CHECK-LABEL: func.func private @m.l.fwd(
// CHECK:         %[[P:.*]] = graph.matmul %arg0, %arg1
// CHECK:         %[[Y:.*]] = graph.add %[[P]], %arg2
// CHECK:         return %{{.*}}, %[[Y]] :
// CHECK-LABEL: func.func private @m.l.bwd(
// CHECK-NOT:     graph.add %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>)
// CHECK:         return
func.func private @m.l(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> attributes {sinter.block = "l"} {
  %p = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %y = graph.add %p, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = graph.constant dense<0.000000e+00> : tensor<f32>
  %r = graph.maximum %y, %z : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
graph.model @m phase "train" {
  %x = graph.input "x" : tensor<4x8xf32>
  %w = graph.param "l.0.w" {init = "ones", init_args = array<f64>} : tensor<8x8xf32>
  %b = graph.param "l.0.b" {init = "ones", init_args = array<f64>} : tensor<8xf32>
  %h = func.call @m.l(%x, %w, %b) : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %l = graph.reduce_sum %h {axes = array<i64>, keepdim = false} : (tensor<4x8xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// A result of the block that the backward pass reads is not computed again:
// the forward call returns it anyway (m, which its square's gradient reads).

// CHECK-LABEL: func.func private @m.k.fwd(
// CHECK:         %[[M:.*]] = graph.maximum %arg0, %arg1
// CHECK:         %[[R:.*]] = graph.mul %[[M]], %[[M]]
// CHECK:         return %[[M]], %[[R]] :
// CHECK-LABEL: func.func private @m.k.bwd(
// CHECK-NOT:     graph.maximum %
// CHECK:         return
func.func private @m.k(%x: tensor<4xf32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {sinter.block = "k"} {
  %m = graph.maximum %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = graph.mul %m, %m : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
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

// A weight shared by every row of a batch, x[2, 3, 4] @ w[4, 5]: its
// gradient is one matmul with the batch folded into the contraction,
// x^T[4, 6] @ g[6, 5], not a batched product of 2 x [4, 5] summed after.
// CHECK-LABEL: graph.model @shared_weight phase "train"
// CHECK:       %[[G:.*]] = graph.add %{{.*}} : (tensor<2x3x5xf32>, tensor<1x1x1xf32>) -> tensor<2x3x5xf32>
// CHECK:       %[[XR:.*]] = graph.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK:       %[[XT:.*]] = graph.transpose %[[XR]] {permutation = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
// CHECK:       %[[GR:.*]] = graph.reshape %[[G]] : (tensor<2x3x5xf32>) -> tensor<6x5xf32>
// CHECK:       %[[DW:.*]] = graph.matmul %[[XT]], %[[GR]] : (tensor<4x6xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
// CHECK-NOT:   graph.reduce_sum
// CHECK:       graph.gradient "w", %[[DW]] : tensor<4x5xf32>
graph.model @shared_weight phase "train" {
  %x = graph.input "x" : tensor<2x3x4xf32>
  %w = graph.param "w" {init = "zeros", init_args = array<f64>} : tensor<4x5xf32>
  %y = graph.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %l = graph.reduce_sum %y {axes = array<i64>, keepdim = false} : (tensor<2x3x5xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// A whole batch-norm is differentiated whole: one graph.batch_norm_grad
// gives the input's, weight's and bias's gradients. Its mean, read by the
// loss too, adds its own gradient (1/3 per channel over its 16 values) to
// the input's.
// CHECK-LABEL: graph.model @bn phase "train"
// CHECK:       %[[Y:.*]], %[[MEAN:.*]], %[[VAR:.*]] = graph.batch_norm %w, %g, %b
// CHECK:       %[[DX:.*]], %[[DG:.*]], %[[DB:.*]] = graph.batch_norm_grad %w, %g, %[[MEAN]], %[[VAR]], %{{.*}} {epsilon = 1.000000e-05 : f64} {{.*}} loc("bn.sn":3:5)
// CHECK:       graph.constant dense<6.250000e-02> : tensor<f32>
// CHECK:       %[[DM:.*]] = graph.add %{{.*}}, %{{.*}} : (tensor<4x3x2x2xf32>, tensor<1x3x1x1xf32>)
// CHECK:       %[[DW:.*]] = graph.add %[[DX]], %[[DM]] : (tensor<4x3x2x2xf32>, tensor<4x3x2x2xf32>)
// CHECK-DAG:   graph.gradient "w", %[[DW]]
// CHECK-DAG:   graph.gradient "g", %[[DG]]
// CHECK-DAG:   graph.gradient "b", %[[DB]]
graph.model @bn phase "train" {
  %w = graph.param "w" {init = "normal", init_args = array<f64: 0.0, 1.0>} : tensor<4x3x2x2xf32>
  %g = graph.param "g" {init = "ones", init_args = array<f64>} : tensor<3xf32>
  %b = graph.param "b" {init = "zeros", init_args = array<f64>} : tensor<3xf32>
  %y, %mean, %var = graph.batch_norm %w, %g, %b {epsilon = 1.0e-05 : f64}
      : (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>) loc("bn.sn":3:5)
  %sq = graph.mul %y, %y : (tensor<4x3x2x2xf32>, tensor<4x3x2x2xf32>) -> tensor<4x3x2x2xf32>
  %l1 = graph.reduce_mean %sq {axes = array<i64>, keepdim = false} : (tensor<4x3x2x2xf32>) -> tensor<f32>
  %l2 = graph.reduce_mean %mean {axes = array<i64>, keepdim = false} : (tensor<3xf32>) -> tensor<f32>
  %l = graph.add %l1, %l2 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}

// -----

// ReLU's gradient reads its result (y > 0 exactly where x > 0), which a
// convolution or matmul after it keeps anyway, not its input.
// CHECK-LABEL: graph.model @relu phase "train"
// CHECK:       %[[Y:.*]] = graph.relu %w
// CHECK:       graph.compare %[[Y]], %{{.*}} {predicate = "gt"}
graph.model @relu phase "train" {
  %w = graph.param "w" {init = "normal", init_args = array<f64: 0.0, 1.0>} : tensor<4x3xf32>
  %y = graph.relu %w : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %l = graph.reduce_sum %y {axes = array<i64>, keepdim = false} : (tensor<4x3xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
