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

func.func @attention_f16(%q: tensor<2x8x16xf16>) -> tensor<2x8x16xf16> {
  // expected-error @below {{takes static operands of rank 2 or more, all bf16 or all f32}}
  %o = train.attention_forward %q, %q, %q {causal = true}
      : tensor<2x8x16xf16>, tensor<2x8x16xf16>, tensor<2x8x16xf16> -> tensor<2x8x16xf16>
  return %o : tensor<2x8x16xf16>
}

// -----

func.func @attention_f32_head(%q: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @below {{in f32 takes operands of one shape with a head size of 32 or 64}}
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

// -----

func.func @batch_norm_channels(%x: tensor<8x4x2x2xf32>, %w: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @below {{operand or result 2 must be f32 [C], not 'tensor<3xf32>'}}
  %y:3 = train.batch_norm_forward %x, %w, %b {epsilon = 1.0e-05 : f64}
      : tensor<8x4x2x2xf32>, tensor<4xf32>, tensor<3xf32>
      -> tensor<8x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @batch_norm_backward_dx(%x: tensor<8x4xf32>, %w: tensor<4xf32>) {
  // expected-error @below {{operand or result 5 must be f32 of x's shape, not 'tensor<4xf32>'}}
  %d:3 = train.batch_norm_backward %x, %x, %w, %w, %w {epsilon = 1.0e-05 : f64}
      : tensor<8x4xf32>, tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
      -> tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @accumulate_without_into(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x8x8x8xf32>) -> tensor<8x3x3x3xf32> {
  // expected-error @below {{on tensors returns its result (adding it to `into` when it accumulates); on buffers writes `into`}}
  %dw = train.conv2d_backward_weights %x, %dy {accumulate, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32> -> tensor<8x3x3x3xf32>
  return %dw : tensor<8x3x3x3xf32>
}

// -----

func.func @into_on_tensors_without_accumulate(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x8x8x8xf32>, %acc: tensor<8x3x3x3xf32>) -> tensor<8x3x3x3xf32> {
  // expected-error @below {{on tensors returns its result (adding it to `into` when it accumulates); on buffers writes `into`}}
  %dw = train.conv2d_backward_weights %x, %dy into %acc {stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32> into tensor<8x3x3x3xf32> -> tensor<8x3x3x3xf32>
  return %dw : tensor<8x3x3x3xf32>
}

// -----

func.func @accumulate_into_another_type(%x: tensor<2x3x8x8xf32>, %dy: tensor<2x8x8x8xf32>, %acc: tensor<8x3x3x4xf32>) -> tensor<8x3x3x3xf32> {
  // expected-error @below {{accumulates into a tensor of its result's type}}
  %dw = train.conv2d_backward_weights %x, %dy into %acc {accumulate, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32> into tensor<8x3x3x4xf32> -> tensor<8x3x3x3xf32>
  return %dw : tensor<8x3x3x3xf32>
}

// -----

func.func @pool_of_another_shape(%x: tensor<2x3x8x8xf32>) -> tensor<2x3x3x3xf32> {
  // expected-error @below {{takes or gives the pooled shape 'tensor<2x3x4x4xf32>', not 'tensor<2x3x3x3xf32>'}}
  %y = train.pool2d_forward %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, max = true}
      : tensor<2x3x8x8xf32> -> tensor<2x3x3x3xf32>
  return %y : tensor<2x3x3x3xf32>
}

// -----

func.func @pool_gradient_of_another_shape(%x: tensor<2x8x8x3xf32>, %dy: tensor<2x4x4x3xf32>) -> tensor<2x3x8x8xf32> {
  // expected-error @below {{gives the gradient of x in x's shape, not 'tensor<2x3x8x8xf32>'}}
  %dx = train.pool2d_backward %x, %dy {channels_last, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, max = false}
      : tensor<2x8x8x3xf32>, tensor<2x4x4x3xf32> -> tensor<2x3x8x8xf32>
  return %dx : tensor<2x3x8x8xf32>
}

// -----

func.func @attention_qkv_statistics(%qkv: tensor<2x8x96xbf16>) {
  // expected-error @below {{operand or result 2 should be 'tensor<2x2x8xf32>', not 'tensor<2x8x2xf32>'}}
  %y:2 = train.attention_qkv_forward %qkv {causal = true, heads = 2 : i64}
      : tensor<2x8x96xbf16> -> tensor<2x8x32xbf16>, tensor<2x8x2xf32>
  return
}

// -----

func.func @attention_qkv_heads(%qkv: tensor<2x8x96xbf16>) {
  // expected-error @below {{takes a static qkv [B, T, 3C] of whole heads, not 'tensor<2x8x96xbf16>'}}
  %y = train.attention_qkv_forward %qkv {causal = true, heads = 5 : i64}
      : tensor<2x8x96xbf16> -> tensor<2x8x32xbf16>
  return
}

// -----

func.func @attention_qkv_backward(%qkv: tensor<2x8x96xbf16>, %y: tensor<2x8x32xbf16>, %lse: tensor<2x2x8xf32>) {
  // expected-error @below {{operand or result 4 should be 'tensor<2x8x96xbf16>', not 'tensor<2x8x96xf32>'}}
  %d = train.attention_qkv_backward %qkv, %y, %lse, %y {causal = true, heads = 2 : i64}
      : tensor<2x8x96xbf16>, tensor<2x8x32xbf16>, tensor<2x2x8xf32>, tensor<2x8x32xbf16>
      -> tensor<2x8x96xf32>
  return
}

// -----

func.func @attention_qkv_element(%qkv: tensor<2x8x96xf16>) {
  // expected-error @below {{takes bf16 or f32, not 'f16'}}
  %y = train.attention_qkv_forward %qkv {causal = true, heads = 2 : i64}
      : tensor<2x8x96xf16> -> tensor<2x8x32xf16>
  return
}

// -----

func.func @attention_qkv_mixed(%qkv: tensor<2x8x192xf32>) {
  // expected-error @below {{operand or result 1 should be 'tensor<2x8x64xf32>', not 'tensor<2x8x64xbf16>'}}
  %y = train.attention_qkv_forward %qkv {causal = true, heads = 2 : i64}
      : tensor<2x8x192xf32> -> tensor<2x8x64xbf16>
  return
}

// -----

func.func @attention_qkv_f32_head(%qkv: tensor<2x8x96xf32>) {
  // expected-error @below {{in f32 takes heads of 32 or 64, not 16}}
  %y = train.attention_qkv_forward %qkv {causal = true, heads = 2 : i64}
      : tensor<2x8x96xf32> -> tensor<2x8x32xf32>
  return
}

// -----

func.func @attention_f32_cross(%q: tensor<2x4x8x32xf32>, %k: tensor<2x4x16x32xf32>) {
  // expected-error @below {{in f32 takes operands of one shape with a head size of 32 or 64}}
  %o = train.attention_forward %q, %k, %k {causal = false}
      : tensor<2x4x8x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32> -> tensor<2x4x8x32xf32>
  return
}
