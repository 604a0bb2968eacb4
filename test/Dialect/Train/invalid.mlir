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

// -----

func.func @attention_f32(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{takes static bf16 operands of rank 2 or more}}
  %o = train.attention_forward %q, %q, %q {causal = true}
      : tensor<2x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

func.func @attention_backward_one_result(%q: tensor<2x8x16xbf16>) -> tensor<2x8x16xbf16> {
  // expected-error @below {{takes 4 inputs and gives 3 results}}
  %d = train.attention_backward %q, %q, %q, %q {causal = true}
      : tensor<2x8x16xbf16>, tensor<2x8x16xbf16>, tensor<2x8x16xbf16>, tensor<2x8x16xbf16>
      -> tensor<2x8x16xbf16>
  return %d : tensor<2x8x16xbf16>
}
