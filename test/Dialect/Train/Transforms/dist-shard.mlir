// RUN: sinter-opt %s -train-build-step -dist-shard="strategy=ZERO1 world-size=2" -canonicalize -cse | FileCheck %s
// RUN: sinter-opt %s -train-build-step -dist-shard="strategy=DDP world-size=2" | FileCheck %s --check-prefix=DDP
// RUN: sinter-opt %s -train-build-step -dist-shard="strategy=ZERO1 world-size=1" | FileCheck %s --check-prefix=DDP
// RUN: not sinter-opt %s -dist-shard="strategy=ZERO3 world-size=2" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// ZERO1 over 2 ranks: w (12 elements) is two shards of 6, b (3 elements)
// two shards of 2, the last padded with a zero. The moments become this
// rank's shards; the update reads the shards of the parameter and of the
// summed gradient at rank * s; a skipped update yields the old shard; then
// the bucket's new shards are gathered in one collective and copied back
// into the parameters' own buffers.

func.func @step(%w: tensor<4x3xf32> {sinter.param = "w"},
                %b: tensor<3xf32> {sinter.param = "b"},
                %gw: tensor<4x3xf32>, %gb: tensor<3xf32>, %loss: tensor<f32>)
    -> (tensor<f32> {sinter.loss = "loss"},
        tensor<4x3xf32> {sinter.gradient = "w"},
        tensor<3xf32> {sinter.gradient = "b"})
    attributes {sinter.phase = "train", sinter.buckets = [["b", "w"]]} {
  return %loss, %gw, %gb : tensor<f32>, tensor<4x3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[W:[^:]*]]: tensor<4x3xf32> {sinter.param = "w"}, %[[B:[^:]*]]: tensor<3xf32> {sinter.param = "b"}
// CHECK-SAME:    %[[GW:[^:]*]]: tensor<4x3xf32>, %[[GB:[^:]*]]: tensor<3xf32>
// CHECK-SAME:    %[[WM:[^:]*]]: tensor<6xf32> {sinter.global_shape = array<i64: 4, 3>, sinter.optimizer_state = "w", sinter.slot = "m"}
// CHECK-SAME:    %[[WV:[^:]*]]: tensor<6xf32> {sinter.global_shape = array<i64: 4, 3>, sinter.optimizer_state = "w", sinter.slot = "v"}
// CHECK-SAME:    %[[BM:[^:]*]]: tensor<2xf32> {sinter.global_shape = array<i64: 3>, sinter.optimizer_state = "b", sinter.slot = "m"}
// CHECK-SAME:    %[[BV:[^:]*]]: tensor<2xf32> {sinter.global_shape = array<i64: 3>, sinter.optimizer_state = "b", sinter.slot = "v"}
// CHECK-SAME:    tensor<4x3xf32> {sinter.updates = 0 : i64}, tensor<6xf32> {sinter.updates = 5 : i64}, tensor<6xf32> {sinter.updates = 6 : i64}
// CHECK-SAME:    tensor<3xf32> {sinter.updates = 1 : i64}, tensor<2xf32> {sinter.updates = 7 : i64}, tensor<2xf32> {sinter.updates = 8 : i64}
// The norm is DDP's: of the whole summed gradients.
// CHECK:         train.global_norm %[[GW]], %[[GB]] : tensor<4x3xf32>, tensor<3xf32>
// CHECK:         %[[RANK:.*]] = train.rank
// CHECK:         %[[FW:.*]] = tensor.collapse_shape %[[W]] {{\[\[}}0, 1]] : tensor<4x3xf32> into tensor<12xf32>
// CHECK:         %[[AT6:.*]] = arith.muli %[[RANK]], %c6
// CHECK:         %[[WS:.*]] = tensor.extract_slice %[[FW]][%[[AT6]]] [6] [1]
// CHECK:         %[[FGW:.*]] = tensor.collapse_shape %[[GW]]
// CHECK:         %[[GWS:.*]] = tensor.extract_slice %[[FGW]][%[[AT6]]] [6] [1]
// b is padded to 4 with zeros before its shard is taken.
// CHECK:         %[[ZEROS:.*]] = linalg.fill
// CHECK:         %[[PB:.*]] = tensor.insert_slice %[[B]] into %[[ZEROS]][0] [3] [1] : tensor<3xf32> into tensor<4xf32>
// CHECK:         %[[AT2:.*]] = arith.muli %[[RANK]], %c2
// CHECK:         %[[BS:.*]] = tensor.extract_slice %[[PB]][%[[AT2]]] [2] [1] : tensor<4xf32> to tensor<2xf32>
// CHECK:         %[[PGB:.*]] = tensor.insert_slice %[[GB]] into %[[ZEROS]][0] [3] [1]
// CHECK:         %[[GBS:.*]] = tensor.extract_slice %[[PGB]][%[[AT2]]] [2] [1]
// CHECK:         %[[NEW:.*]]:6 = scf.if
// CHECK:           train.adamw_update %[[WS]], %[[GWS]], %[[WM]], %[[WV]] {{.*}} : tensor<6xf32>
// CHECK:           train.adamw_update %[[BS]], %[[GBS]], %[[BM]], %[[BV]] {{.*}} : tensor<2xf32>
// CHECK:         } else {
// CHECK-NEXT:      scf.yield %[[WS]], %[[WM]], %[[WV]], %[[BS]], %[[BM]], %[[BV]]
// One gather for the bucket: b's shard, then w's, in bucket order.
// CHECK:         %[[PACK0:.*]] = tensor.insert_slice %[[NEW]]#3 into %{{.*}}[0] [2] [1] : tensor<2xf32> into tensor<8xf32>
// CHECK:         %[[PACK:.*]] = tensor.insert_slice %[[NEW]]#0 into %[[PACK0]][2] [6] [1] : tensor<6xf32> into tensor<8xf32>
// CHECK:         %[[ROWS:.*]] = train.all_gather %[[PACK]] into %{{.*}} : tensor<8xf32> into tensor<2x8xf32> -> tensor<2x8xf32>
// b: row 0's two elements, then row 1's first (the second is padding).
// CHECK:         %[[B0:.*]] = tensor.extract_slice %[[ROWS]][0, 0] [1, 2] [1, 1] : tensor<2x8xf32> to tensor<2xf32>
// CHECK:         %[[C0:.*]] = linalg.copy ins(%[[B0]] : tensor<2xf32>)
// CHECK:         %[[IB0:.*]] = tensor.insert_slice %[[C0]] into %[[B]][0] [2] [1]
// CHECK:         %[[B1:.*]] = tensor.extract_slice %[[ROWS]][1, 0] [1, 1] [1, 1] : tensor<2x8xf32> to tensor<1xf32>
// CHECK:         %[[C1:.*]] = linalg.copy ins(%[[B1]] : tensor<1xf32>)
// CHECK:         %[[NB:.*]] = tensor.insert_slice %[[C1]] into %[[IB0]][2] [1] [1]
// w: both rows whole, into w's own buffer seen as 2x6.
// CHECK:         %[[WR:.*]] = tensor.extract_slice %[[ROWS]][0, 2] [2, 6] [1, 1] : tensor<2x8xf32> to tensor<2x6xf32>
// CHECK:         %[[WDST:.*]] = tensor.expand_shape %[[FW]] {{\[\[}}0, 1]] output_shape [2, 6]
// CHECK:         %[[CW:.*]] = linalg.copy ins(%[[WR]] : tensor<2x6xf32>) outs(%[[WDST]] : tensor<2x6xf32>)
// CHECK:         %[[NW:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 3]
// CHECK:         return {{.*}}, %[[NW]], %[[NEW]]#1, %[[NEW]]#2, %[[NB]], %[[NEW]]#4, %[[NEW]]#5 :

// DDP, or ZERO1 on one rank: the update of train-build-step, unchanged.
// DDP-NOT:     train.rank
// DDP-NOT:     train.all_gather
// DDP:         train.adamw_update {{.*}} : tensor<4x3xf32>
// DDP:         train.adamw_update {{.*}} : tensor<3xf32>

// UNKNOWN: error: dist-shard: no strategy ZERO3; DDP, ZERO1, ZERO2 and FULL_SHARD are
