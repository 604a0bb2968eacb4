// RUN: sinter-opt %s | sinter-opt | FileCheck %s
// RUN: sinter-opt %s --mlir-print-op-generic | sinter-opt | FileCheck %s

// The train dialect's ops print and parse back.

// CHECK-LABEL: func.func @loop_ops
// CHECK:  train.micro_batch_count : index
// CHECK:  train.global_batch : index
// CHECK:  train.random_key %{{.*}} : i64
// CHECK:  train.sum_over_ranks %{{.*}} : i64
// CHECK:  train.micro_batch_input "x" %{{.*}}[%{{.*}}] : tensor<2x3xf32>
// CHECK:  train.bucket_ready 0(%{{.*}}) : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK:  train.gradients_ready
func.func @loop_ops(%x: tensor<2x3xf32>, %n: i64) -> tensor<2x3xf32> {
  %k = train.micro_batch_count : index
  %g = train.global_batch : index
  %key = train.random_key %k : i64
  %all = train.sum_over_ranks %n : i64
  %in = train.micro_batch_input "x" %x[%k] : tensor<2x3xf32>
  %b = train.bucket_ready 0(%in) : tensor<2x3xf32> -> tensor<2x3xf32>
  train.gradients_ready
  return %b : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @update_ops
// CHECK:  %[[LR:.*]] = train.hyperparameter "lr" : f64
// CHECK:  train.global_norm %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32>
// CHECK:  train.adamw_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} lr(%[[LR]]) weight_decay(%[[LR]]) betas(%[[LR]], %[[LR]]) eps(%[[LR]]) step(%[[LR]]) grad_scale(%[[LR]]) : tensor<2x3xf32>
// CHECK:  train.sgd_update %{{.*}}, %{{.*}} lr(%[[LR]])
// CHECK:  train.sgd_update %{{.*}}, %{{.*}} momentum_buffer(%{{.*}} : tensor<3xf32>) lr(%[[LR]])
func.func @update_ops(%p: tensor<2x3xf32>, %b: tensor<3xf32>) -> f64 {
  %lr = train.hyperparameter "lr" : f64
  %n = train.global_norm %p, %b : tensor<2x3xf32>, tensor<3xf32>
  %p2, %m2, %v2 = train.adamw_update %p, %p, %p, %p lr(%lr) weight_decay(%lr)
      betas(%lr, %lr) eps(%lr) step(%lr) grad_scale(%lr) : tensor<2x3xf32>
  %b2 = train.sgd_update %b, %b lr(%lr) weight_decay(%lr) momentum(%lr)
      nesterov(%lr) grad_scale(%lr) : tensor<3xf32>
  %b3, %m3 = train.sgd_update %b, %b momentum_buffer(%b : tensor<3xf32>)
      lr(%lr) weight_decay(%lr) momentum(%lr) nesterov(%lr) grad_scale(%lr)
      : tensor<3xf32>
  return %n : f64
}
