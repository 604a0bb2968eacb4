// RUN: sinter-opt %s -split-input-file -verify-diagnostics

func.func @unknown_hyperparameter() -> f64 {
  // expected-error @below {{unknown hyperparameter 'learning_rate'; known: lr, step, weight_decay}}
  %lr = train.hyperparameter "learning_rate" : f64
  return %lr : f64
}

// -----

func.func @momentum_buffer_type(%p: tensor<3xf32>, %b: tensor<4xf32>, %s: f64) {
  // expected-error @below {{takes a gradient and momentum buffer of the parameter's type}}
  %p2, %b2 = train.sgd_update %p, %p momentum_buffer(%b : tensor<4xf32>)
      lr(%s) weight_decay(%s) momentum(%s) nesterov(%s) grad_scale(%s)
      : tensor<3xf32>
  return
}

// -----

func.func @bucket_without_gradients() {
  // expected-error @below {{takes one or more gradients, all tensors or all buffers}}
  "train.bucket_ready"() {bucket = 0 : i64} : () -> ()
  return
}
