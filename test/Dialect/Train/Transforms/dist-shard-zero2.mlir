// RUN: sinter-opt %s -train-accumulate -dist-bucket -train-build-step -dist-shard="strategy=ZERO2 world-size=2" -canonicalize -cse | FileCheck %s

// ZERO2 over 2 ranks, one bucket (b, then w). In every micro-batch the
// bucket's fresh gradients are packed into two rows, b's zero-padded from 3
// to 4 elements (slices of 2) and w's 12 (slices of 6), and reduce-scattered;
// each rank accumulates its 8 elements in a loop-carried tensor. The last
// micro-batch's collective is waited for after the backward pass. The step
// returns the slices instead of the gradients; the norm is summed over the
// ranks; the update reads this rank's slices; ZERO1's gather follows.

func.func @step(%x: tensor<4x3xf32> {sinter.input = "x"},
                %w: tensor<4x3xf32> {sinter.param = "w"},
                %b: tensor<3xf32> {sinter.param = "b"})
    -> (tensor<f32> {sinter.loss = "loss"},
        tensor<4x3xf32> {sinter.gradient = "w"},
        tensor<3xf32> {sinter.gradient = "b"})
    attributes {sinter.phase = "train"} {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0, %c0] : tensor<4x3xf32>
  %loss = tensor.from_elements %v : tensor<f32>
  %eb = tensor.empty() : tensor<3xf32>
  %gb = linalg.fill ins(%v : f32) outs(%eb : tensor<3xf32>) -> tensor<3xf32>
  %ew = tensor.empty() : tensor<4x3xf32>
  %gw = linalg.fill ins(%v : f32) outs(%ew : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %loss, %gw, %gb : tensor<f32>, tensor<4x3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    tensor<6xf32> {sinter.global_shape = array<i64: 4, 3>, sinter.optimizer_state = "w", sinter.slot = "m"}
// CHECK-NOT:     sinter.gradient =
// CHECK-SAME:    tensor<8xf32> {sinter.gradient_slices = "bucket0"})
// CHECK-NOT:     sinter.buckets
// CHECK:         %[[ZEROS:.*]] = linalg.fill {{.*}} -> tensor<8xf32>
// CHECK:         %[[LOOP:.*]]:3 = scf.for {{.*}} iter_args({{.*}}, %[[ACC:.*]] = %[[ZEROS]]) -> (tensor<4x3xf32>, tensor<f32>, tensor<8xf32>)
// CHECK:           %[[PADB:.*]] = tensor.insert_slice {{.*}} into {{.*}}[0] [3] [1] : tensor<3xf32> into tensor<4xf32>
// CHECK:           %[[BB:.*]] = tensor.expand_shape %[[PADB]] {{\[\[}}0, 1]] output_shape [2, 2]
// CHECK:           %[[R0:.*]] = tensor.insert_slice %[[BB]] into %{{.*}}[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x8xf32>
// CHECK:           %[[ROWS:.*]] = tensor.insert_slice %{{.*}} into %[[R0]][0, 2] [2, 6] [1, 1] : tensor<2x6xf32> into tensor<2x8xf32>
// CHECK:           %[[S:.*]] = train.reduce_scatter_start 0, %[[ROWS]] : tensor<2x8xf32> -> tensor<8xf32>
// CHECK:           %[[DONE:.*]] = train.collective_wait 0, %[[S]] keep %[[ROWS]]
// CHECK:           %[[SUM:.*]] = linalg.add ins(%[[ACC]], %[[DONE]] : tensor<8xf32>, tensor<8xf32>) outs(%[[ACC]] : tensor<8xf32>)
// CHECK:           scf.yield {{.*}}, %[[SUM]] :
// The last micro-batch:
// CHECK:         %[[LROWS:.*]] = tensor.insert_slice {{.*}}[0, 2] [2, 6] [1, 1] : tensor<2x6xf32> into tensor<2x8xf32>
// CHECK:         %[[LS:.*]] = train.reduce_scatter_start 0, %[[LROWS]]
// CHECK:         train.gradients_ready
// CHECK-NEXT:    %[[LDONE:.*]] = train.collective_wait 0, %[[LS]] keep %[[LROWS]]
// CHECK-NEXT:    %[[FINAL:.*]] = linalg.add ins(%[[LOOP]]#2, %[[LDONE]] : {{.*}}) outs(%[[LOOP]]#2 : tensor<8xf32>)
// CHECK-DAG:     %[[GW:.*]] = tensor.extract_slice %[[FINAL]][2] [6] [1] : tensor<8xf32> to tensor<6xf32>
// CHECK-DAG:     %[[GB:.*]] = tensor.extract_slice %[[FINAL]][0] [2] [1] : tensor<8xf32> to tensor<2xf32>
// The norm: this rank's slices, squared, summed over the ranks.
// CHECK:         %[[MINE:.*]] = train.global_norm %[[FINAL]] : tensor<8xf32>
// CHECK:         %[[SQ:.*]] = arith.mulf %[[MINE]], %[[MINE]] : f64
// CHECK:         %[[T:.*]] = tensor.from_elements %[[SQ]] : tensor<1xf64>
// CHECK:         train.all_reduce_sum %[[T]]
// CHECK:         math.sqrt
// CHECK:         scf.if
// CHECK:           train.adamw_update %{{.*}}, %[[GW]], {{.*}} : tensor<6xf32>
// CHECK:           train.adamw_update %{{.*}}, %[[GB]], {{.*}} : tensor<2xf32>
// CHECK:         train.all_gather {{.*}} : tensor<8xf32> into tensor<2x8xf32>
// CHECK:         return {{.*}}, %[[FINAL]] :
