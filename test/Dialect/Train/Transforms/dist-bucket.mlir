// RUN: sinter-opt %s -train-accumulate -dist-bucket="first-bucket-mb=0.25 bucket-cap-mb=1" | FileCheck %s
// RUN: sinter-opt %s -train-accumulate -dist-bucket="first-bucket-mb=0.25 bucket-cap-mb=1 overlap=false" | FileCheck %s --check-prefix=AFTER

// Backward produces the gradients in the order c, b, a, d. Buckets follow
// that order: the first holds at most 256 KiB (c, 1 MiB, is alone in it),
// the others 1 MiB (b and a share one), and an f64 gradient never shares
// with f32 ones. The last micro-batch is peeled out of the loop; each
// gradient is added into its accumulator as soon as it is computed, and each
// bucket starts right after its last gradient, while backward goes on.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    sinter.buckets = {{\[\[}}"c"], ["b", "a"], ["d"]]
// CHECK:       %[[K:.*]] = train.micro_batch_count
// CHECK:       %[[LAST:.*]] = arith.subi %[[K]], %c1
// CHECK:       %[[LOOP:.*]]:6 = scf.for %{{.*}} = %{{.*}} to %[[LAST]]
// CHECK-NOT:     train.bucket_ready
// CHECK:         scf.yield
// The peeled micro-batch:
// CHECK:       train.micro_batch_input "x" %[[LOOP]]#0[%[[LAST]]]
// CHECK:       %[[GC:.*]] = linalg.fill {{.*}} -> tensor<262144xf32>
// CHECK-NEXT:  %[[AC:.*]] = linalg.generic {{.*}} ins(%[[GC]] : tensor<262144xf32>) outs(%[[LOOP]]#4 : tensor<262144xf32>)
// CHECK:       %[[B0:.*]] = train.bucket_ready 0(%[[AC]]) : tensor<262144xf32> -> tensor<262144xf32>
// CHECK:       %[[GB:.*]] = linalg.fill {{.*}} -> tensor<65536xf32>
// CHECK-NEXT:  %[[AB:.*]] = linalg.generic {{.*}} ins(%[[GB]] : tensor<65536xf32>)
// CHECK:       %[[GA:.*]] = linalg.fill {{.*}} -> tensor<1024xf32>
// CHECK-NEXT:  %[[AA:.*]] = linalg.generic {{.*}} ins(%[[GA]] : tensor<1024xf32>)
// CHECK:       %[[B1:.*]]:2 = train.bucket_ready 1(%[[AB]], %[[AA]]) : tensor<65536xf32>, tensor<1024xf32>
// CHECK:       %[[GD:.*]] = linalg.fill {{.*}} -> tensor<16xf64>
// CHECK-NEXT:  %[[AD:.*]] = linalg.generic {{.*}} ins(%[[GD]] : tensor<16xf64>)
// CHECK:       %[[B2:.*]] = train.bucket_ready 2(%[[AD]]) : tensor<16xf64>
// CHECK:       train.gradients_ready
// CHECK:       return %{{.*}}, %[[B1]]#1, %[[B1]]#0, %[[B0]], %[[B2]]
// Without overlap (parallel { overlap: false }): the same buckets, each
// started only once the whole backward pass of the last micro-batch is done.
// AFTER-LABEL: func.func @step(
// AFTER-SAME:    sinter.buckets = {{\[\[}}"c"], ["b", "a"], ["d"]]
// AFTER:       scf.for
// AFTER-NOT:     train.bucket_ready
// AFTER:         scf.yield
// AFTER-NOT:   train.bucket_ready
// AFTER:       linalg.generic {{.*}} ins(%{{.*}} : tensor<262144xf32>)
// AFTER-NOT:   train.bucket_ready
// AFTER:       linalg.generic {{.*}} ins(%{{.*}} : tensor<65536xf32>)
// AFTER-NOT:   train.bucket_ready
// AFTER:       linalg.generic {{.*}} ins(%{{.*}} : tensor<1024xf32>)
// AFTER-NOT:   train.bucket_ready
// AFTER:       %[[AD:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<16xf64>)
// AFTER:       train.bucket_ready 0(
// AFTER-NEXT:  train.bucket_ready 1(
// AFTER-NEXT:  train.bucket_ready 2(%[[AD]])
// AFTER-NEXT:  train.gradients_ready
func.func @step(%x: tensor<4x16xf32> {sinter.input = "x"})
    -> (tensor<f32> {sinter.loss = "loss"},
        tensor<1024xf32> {sinter.gradient = "a"},
        tensor<65536xf32> {sinter.gradient = "b"},
        tensor<262144xf32> {sinter.gradient = "c"},
        tensor<16xf64> {sinter.gradient = "d"})
    attributes {sinter.phase = "train"} {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0, %c0] : tensor<4x16xf32>
  %loss = tensor.from_elements %v : tensor<f32>
  %ec = tensor.empty() : tensor<262144xf32>
  %gc = linalg.fill ins(%v : f32) outs(%ec : tensor<262144xf32>) -> tensor<262144xf32>
  %eb = tensor.empty() : tensor<65536xf32>
  %gb = linalg.fill ins(%v : f32) outs(%eb : tensor<65536xf32>) -> tensor<65536xf32>
  %ea = tensor.empty() : tensor<1024xf32>
  %ga = linalg.fill ins(%v : f32) outs(%ea : tensor<1024xf32>) -> tensor<1024xf32>
  %vd = arith.extf %v : f32 to f64
  %ed = tensor.empty() : tensor<16xf64>
  %gd = linalg.fill ins(%vd : f64) outs(%ed : tensor<16xf64>) -> tensor<16xf64>
  return %loss, %ga, %gb, %gc, %gd : tensor<f32>, tensor<1024xf32>, tensor<65536xf32>, tensor<262144xf32>, tensor<16xf64>
}
