// RUN: sinter-opt %s -dist-shard -sinter-linalg-to-memory-plan | FileCheck %s

// FULL_SHARD frees a gathered group after its last use: in the memory plan,
// three groups of 64x64 (2 x 2048 gathered floats each, 16 KiB) need only
// two groups' bytes, because the third group's gather, started once the
// second one is waited for, reuses the first group's bytes, dead since the
// first layer's matmul. Each rows buffer is the arena's, at a planned offset.

module attributes {sinter.strategy = "FULL_SHARD", sinter.world_size = 2 : i64} {
func.func @eval(%x: tensor<4x64xf32> {sinter.input = "x"},
                %w0: tensor<64x64xf32> {sinter.param = "l.0.w"},
                %w1: tensor<64x64xf32> {sinter.param = "l.1.w"},
                %w2: tensor<64x64xf32> {sinter.param = "l.2.w"})
    -> (tensor<f32> {sinter.loss = "loss"}) attributes {sinter.phase = "eval"} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %h0 = linalg.matmul ins(%x, %w0 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z : tensor<4x64xf32>) -> tensor<4x64xf32>
  %h1 = linalg.matmul ins(%h0, %w1 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z : tensor<4x64xf32>) -> tensor<4x64xf32>
  %h2 = linalg.matmul ins(%h1, %w2 : tensor<4x64xf32>, tensor<64x64xf32>) outs(%z : tensor<4x64xf32>) -> tensor<4x64xf32>
  %v = tensor.extract %h2[%c0, %c0] : tensor<4x64xf32>
  %loss = tensor.from_elements %v : tensor<f32>
  return %loss : tensor<f32>
}
}

// CHECK-LABEL: func.func @eval(
// CHECK-SAME:    %[[ARENA:[a-z0-9]+]]: memref<34816xi8> {sinter.workspace})
// CHECK-SAME:    sinter.arena_bytes = 34816 : i64, sinter.communication_bytes = 32768 : i64
// CHECK:         memref.view %[[ARENA]][%c0{{(_[0-9]+)?}}][] : memref<34816xi8> to memref<2x2048xf32>
// CHECK:         call @sinter_rt_all_gather_start_f32(%c4294967296_i64,
// CHECK:         call @sinter_rt_collective_wait(%c4294967296_i64
// CHECK:         memref.view %[[ARENA]][%c16384{{(_[0-9]+)?}}][] : memref<34816xi8> to memref<2x2048xf32>
// CHECK:         call @sinter_rt_all_gather_start_f32(%c4294967298_i64,
// CHECK:         linalg.matmul
// CHECK:         call @sinter_rt_collective_wait(%c4294967298_i64
// CHECK:         memref.view %[[ARENA]][%c0{{(_[0-9]+)?}}][] : memref<34816xi8> to memref<2x2048xf32>
// CHECK:         call @sinter_rt_all_gather_start_f32(%c4294967300_i64,
// CHECK:         linalg.matmul
// CHECK:         call @sinter_rt_collective_wait(%c4294967300_i64
// CHECK:         linalg.matmul
