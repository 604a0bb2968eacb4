// RUN: sinter-opt %s -train-accumulate -dist-bucket -train-build-step -dist-shard="strategy=FULL_SHARD world-size=2" -canonicalize -cse | FileCheck %s

// FULL_SHARD over 2 ranks. Each parameter is held as this rank's shard
// (3x3 as 5 of 10 padded elements, the bias's 3 as 2 of 4). In each
// micro-batch the forward pass gathers group l.0, then l.1, then head, each
// just before its first use, the next group's gather starting as soon as
// the previous one's is waited for (prefetch). The gathered rows are the
// parameter itself: collapsed, cut where the padding starts, reshaped. The
// backward pass gathers l.1 again (with its own id), after the forward pass,
// where its transpose now is: it was placed early, and moved to just before
// its first use. The update writes the shards; nothing is gathered after it.

func.func @step(%x: tensor<4x3xf32> {sinter.input = "x"},
                %w0: tensor<3x3xf32> {sinter.param = "l.0.w"},
                %w1: tensor<3x3xf32> {sinter.param = "l.1.w"},
                %b: tensor<3xf32> {sinter.param = "head.b"})
    -> (tensor<f32> {sinter.loss = "loss"},
        tensor<3x3xf32> {sinter.gradient = "l.0.w"},
        tensor<3x3xf32> {sinter.gradient = "l.1.w"},
        tensor<3xf32> {sinter.gradient = "head.b"})
    attributes {sinter.phase = "train"} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e43 = tensor.empty() : tensor<4x3xf32>
  %z43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e33 = tensor.empty() : tensor<3x3xf32>
  %z33 = linalg.fill ins(%zero : f32) outs(%e33 : tensor<3x3xf32>) -> tensor<3x3xf32>
  %e34 = tensor.empty() : tensor<3x4xf32>
  // Forward.
  %h0 = linalg.matmul ins(%x, %w0 : tensor<4x3xf32>, tensor<3x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h1 = linalg.matmul ins(%h0, %w1 : tensor<4x3xf32>, tensor<3x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  // Backward's, placed early: w1 transposed for the gradient of h0.
  %w1t = linalg.transpose ins(%w1 : tensor<3x3xf32>) outs(%e33 : tensor<3x3xf32>) permutation = [1, 0]
  %v = tensor.extract %h1[%c0, %c0] : tensor<4x3xf32>
  %bv = tensor.extract %b[%c0] : tensor<3xf32>
  %s = arith.addf %v, %bv : f32
  %loss = tensor.from_elements %s : tensor<f32>
  // Backward, from a seed of ones.
  %ones = linalg.fill ins(%one : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %gh0 = linalg.matmul ins(%ones, %w1t : tensor<4x3xf32>, tensor<3x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h0t = linalg.transpose ins(%h0 : tensor<4x3xf32>) outs(%e34 : tensor<3x4xf32>) permutation = [1, 0]
  %gw1 = linalg.matmul ins(%h0t, %ones : tensor<3x4xf32>, tensor<4x3xf32>) outs(%z33 : tensor<3x3xf32>) -> tensor<3x3xf32>
  %xt = linalg.transpose ins(%x : tensor<4x3xf32>) outs(%e34 : tensor<3x4xf32>) permutation = [1, 0]
  %gw0 = linalg.matmul ins(%xt, %gh0 : tensor<3x4xf32>, tensor<4x3xf32>) outs(%z33 : tensor<3x3xf32>) -> tensor<3x3xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %gb = linalg.fill ins(%one : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  return %loss, %gw0, %gw1, %gb : tensor<f32>, tensor<3x3xf32>, tensor<3x3xf32>, tensor<3xf32>
}


// The eval step reads the same shards, gathered before use.
func.func @eval(%x: tensor<4x3xf32> {sinter.input = "x"},
                %w0: tensor<3x3xf32> {sinter.param = "l.0.w"})
    -> (tensor<f32> {sinter.loss = "loss"}) attributes {sinter.phase = "eval"} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %e43 = tensor.empty() : tensor<4x3xf32>
  %z43 = linalg.fill ins(%zero : f32) outs(%e43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %h0 = linalg.matmul ins(%x, %w0 : tensor<4x3xf32>, tensor<3x3xf32>) outs(%z43 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %v = tensor.extract %h0[%c0, %c0] : tensor<4x3xf32>
  %loss = tensor.from_elements %v : tensor<f32>
  return %loss : tensor<f32>
}

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[W0:[a-z0-9]+]]: tensor<5xf32> {sinter.global_shape = array<i64: 3, 3>, sinter.param = "l.0.w"}
// CHECK-SAME:    %[[W1:[a-z0-9]+]]: tensor<5xf32> {sinter.global_shape = array<i64: 3, 3>, sinter.param = "l.1.w"}
// CHECK-SAME:    %[[B:[a-z0-9]+]]: tensor<2xf32> {sinter.global_shape = array<i64: 3>, sinter.param = "head.b"}
// CHECK-SAME:    -> (tensor<f32> {sinter.loss = "loss"},
// CHECK-SAME:    tensor<5xf32> {sinter.updates = 1 : i64}
// The micro-batch loop's forward pass.
// CHECK:       scf.for
// CHECK:         %[[R0:.+]] = train.all_gather_start 4294967296, %[[W0]] : tensor<5xf32> -> tensor<2x5xf32>
// CHECK-NEXT:    %[[D0:.+]] = train.collective_wait 4294967296, %[[R0]] keep %[[W0]]
// CHECK-NEXT:    %[[F0:.+]] = tensor.collapse_shape %[[D0]] {{\[\[}}0, 1]] : tensor<2x5xf32> into tensor<10xf32>
// CHECK-NEXT:    %[[C0:.+]] = tensor.extract_slice %[[F0]][0] [9] [1]
// CHECK-NEXT:    %[[P0:.+]] = tensor.expand_shape %[[C0]] {{\[\[}}0, 1]] output_shape [3, 3]
// CHECK-NEXT:    %[[R1:.+]] = train.all_gather_start 4294967298, %[[W1]] : tensor<5xf32> -> tensor<2x5xf32>
// CHECK-NEXT:    %[[H0:.+]] = linalg.matmul ins(%{{.+}}, %[[P0]] :
// CHECK-NEXT:    %[[D1:.+]] = train.collective_wait 4294967298, %[[R1]] keep %[[W1]]
// CHECK:         %[[P1:.+]] = tensor.expand_shape
// CHECK-NEXT:    %[[R2:.+]] = train.all_gather_start 4294967300, %[[B]] : tensor<2xf32> -> tensor<2x2xf32>
// CHECK-NEXT:    linalg.matmul ins(%[[H0]], %[[P1]] :
// CHECK:         train.collective_wait 4294967300, %[[R2]] keep %[[B]]
// Its backward pass: l.1 gathered again, where its transpose moved.
// CHECK:         %[[RB:.+]] = train.all_gather_start 4294967299, %[[W1]]
// CHECK-NEXT:    train.collective_wait 4294967299, %[[RB]] keep %[[W1]]
// CHECK:         %[[PB:.+]] = tensor.expand_shape
// CHECK-NEXT:    %[[T:.+]] = linalg.transpose ins(%[[PB]] :
// CHECK-NEXT:    linalg.matmul ins(%{{.+}}, %[[T]] :
// CHECK:         train.reduce_scatter_start 0
// CHECK:         scf.yield
// The last micro-batch gathers the same way.
// CHECK:       train.all_gather_start 4294967296, %[[W0]]
// CHECK:       train.all_gather_start 4294967298, %[[W1]]
// CHECK:       train.all_gather_start 4294967300, %[[B]]
// CHECK:       train.all_gather_start 4294967299, %[[W1]]
// The update: on the shards, which the step returns.
// CHECK:       train.adamw_update %[[W0]], %{{.+}} : tensor<5xf32>
// CHECK:       train.adamw_update %[[W1]], %{{.+}} : tensor<5xf32>
// CHECK:       train.adamw_update %[[B]], %{{.+}} : tensor<2xf32>
// CHECK-NOT:   train.all_gather {{%}}
// CHECK:       return

// CHECK-LABEL: func.func @eval(
// CHECK-SAME:    %[[EW:[a-z0-9]+]]: tensor<5xf32> {sinter.global_shape = array<i64: 3, 3>, sinter.param = "l.0.w"}
// CHECK:         %[[ER:.+]] = train.all_gather_start 4294967296, %[[EW]]
// CHECK-NEXT:    train.collective_wait 4294967296, %[[ER]] keep %[[EW]]
// CHECK:         linalg.matmul
