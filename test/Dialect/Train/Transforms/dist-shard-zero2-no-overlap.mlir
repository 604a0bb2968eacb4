// RUN: sinter-opt %s -train-accumulate -dist-bucket="first-bucket-mb=0.00001" -train-build-step -dist-shard="strategy=ZERO2 world-size=2" | FileCheck %s

// ZERO2 compiled with parallel { overlap: false } (the module's
// sinter.no_overlap): two buckets, b's then w's. In every micro-batch, the
// loop's included, neither reduce-scatter starts before the backward pass
// has computed both gradients (with overlap, b's starts right after b).

// CHECK-LABEL: func.func @step(
// CHECK:         scf.for
// CHECK-NOT:       train.reduce_scatter_start
// CHECK:           linalg.fill {{.*}} -> tensor<3xf32>
// CHECK-NOT:       train.reduce_scatter_start
// CHECK:           arith.addf %in, %in
// CHECK:           train.reduce_scatter_start 0,
// CHECK:           train.reduce_scatter_start 1,
// CHECK:           scf.yield
// The last micro-batch, peeled:
// CHECK-NOT:     train.reduce_scatter_start
// CHECK:         linalg.fill {{.*}} -> tensor<3xf32>
// CHECK-NOT:     train.reduce_scatter_start
// CHECK:         arith.addf %in, %in
// CHECK:         train.reduce_scatter_start 0,
// CHECK:         train.reduce_scatter_start 1,
module attributes {sinter.no_overlap} {
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
  %gw = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x3xf32>) outs(%ew : tensor<4x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  } -> tensor<4x3xf32>
  return %loss, %gw, %gb : tensor<f32>, tensor<4x3xf32>, tensor<3xf32>
}
}
