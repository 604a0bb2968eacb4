// RUN: sinter-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// graph.model and the ops it holds
//===----------------------------------------------------------------------===//

// expected-error @+1 {{attribute 'phase' failed to satisfy constraint: string attribute whose value is one of train, eval}}
graph.model @m phase "test" {
}

// -----

graph.model @m phase "train" {
  %0 = graph.constant dense<1.0> : tensor<f32>
  // expected-note @+1 {{first loss here}}
  graph.loss %0 : tensor<f32>
  // expected-error @+1 {{'graph.loss' op is a second loss of model 'm'; a model has at most one}}
  graph.loss %0 : tensor<f32>
}

// -----

graph.model @m phase "train" {
  // expected-note @+1 {{first defined here}}
  %0 = graph.param "fc.weight" {init = "zeros", init_args = array<f64>} : tensor<4xf32>
  // expected-error @+1 {{'graph.state' op redefines the parameter or state 'fc.weight'}}
  %1 = graph.state "fc.weight" {init = "zeros", init_args = array<f64>} : tensor<4xf32>
}

// -----

graph.model @m phase "train" {
  // expected-note @+1 {{first defined here}}
  %0 = graph.input "x" : tensor<?x4xf32>
  // expected-error @+1 {{'graph.input' op redefines input 'x'}}
  %1 = graph.input "x" : tensor<?x4xf32>
}

// -----

graph.model @m phase "train" {
  %0 = graph.constant dense<1.0> : tensor<f32>
  // expected-note @+1 {{first defined here}}
  graph.metric "acc", %0 : tensor<f32>
  // expected-error @+1 {{'graph.metric' op redefines metric 'acc'}}
  graph.metric "acc", %0 : tensor<f32>
}

// -----

graph.model @m phase "train" {
  %0 = graph.constant dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{'graph.state_update' op updates 'bn.running_mean', but the model has no graph.state of that name}}
  graph.state_update "bn.running_mean", %0 : tensor<4xf32>
}

// -----

graph.model @m phase "train" {
  %0 = graph.param "w" {init = "zeros", init_args = array<f64>} : tensor<4xf32>
  // expected-error @+1 {{'graph.state_update' op updates 'w', which is a graph.param; only a graph.state can be updated}}
  graph.state_update "w", %0 : tensor<4xf32>
}

// -----

graph.model @m phase "train" {
  %0 = graph.constant dense<1.0> : tensor<8xf32>
  // expected-error @+1 {{'graph.state_update' op updates state 'mean' of type 'tensor<4xf32>' with a value of type 'tensor<8xf32>'}}
  graph.state_update "mean", %0 : tensor<8xf32>
  %1 = graph.state "mean" {init = "zeros", init_args = array<f64>} : tensor<4xf32>
}

// -----

graph.model @m phase "train" {
  %0 = graph.state "mean" {init = "zeros", init_args = array<f64>} : tensor<4xf32>
  // expected-note @+1 {{first defined here}}
  graph.state_update "mean", %0 : tensor<4xf32>
  // expected-error @+1 {{'graph.state_update' op redefines the update of state 'mean'}}
  graph.state_update "mean", %0 : tensor<4xf32>
}

// -----

func.func @input_outside_model() {
  // expected-error @+1 {{'graph.input' op expects parent op 'graph.model'}}
  %0 = graph.input "x" : tensor<4xf32>
  return
}

// -----

graph.model @m phase "train" {
  // expected-error @+1 {{'graph.param' op initializer 'normal' takes 2 arguments, got 1}}
  %0 = graph.param "w" {init = "normal", init_args = array<f64: 0.0>} : tensor<4xf32>
}

// -----

graph.model @m phase "train" {
  // expected-error @+1 {{'graph.state' op initializer 'trunc_normal' takes 4 arguments, got 2}}
  %0 = graph.state "s" {init = "trunc_normal", init_args = array<f64: 0.0, 1.0>} : tensor<4xf32>
}

// -----

graph.model @m phase "train" {
  // expected-error @+1 {{attribute 'init' failed to satisfy constraint: string attribute whose value is one of zeros, ones, constant, normal, uniform, trunc_normal, kaiming_uniform, kaiming_normal, xavier_uniform}}
  %0 = graph.param "w" {init = "he", init_args = array<f64>} : tensor<4xf32>
}

// -----

graph.model @m phase "train" {
  // expected-error @+1 {{result #0 must be statically shaped tensor of f64, f32, bf16 or f16 values, but got 'tensor<?x4xf32>'}}
  %0 = graph.param "w" {init = "zeros", init_args = array<f64>} : tensor<?x4xf32>
}

// -----

graph.model @m phase "train" {
  // expected-error @+1 {{result #0 must be statically shaped tensor of f64, f32, bf16 or f16 values, but got 'tensor<4xi32>'}}
  %0 = graph.param "w" {init = "zeros", init_args = array<f64>} : tensor<4xi32>
}

// -----

graph.model @m phase "train" {
  %0 = graph.constant dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{operand #0 must be 0D tensor of f64, f32, bf16 or f16 values, but got 'tensor<4xf32>'}}
  graph.loss %0 : tensor<4xf32>
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{'graph.constant' op result type 'tensor<f64>' differs from the type 'tensor<f32>' of the value}}
  %0 = "graph.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f64>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// -----

func.func @broadcast(%x: tensor<4x3xf32>, %y: tensor<5xf32>) {
  // expected-error @+1 {{'graph.add' op shapes [4, 3] and [5] cannot be broadcast together}}
  %0 = graph.add %x, %y : (tensor<4x3xf32>, tensor<5xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @element_types(%x: tensor<4xf32>, %y: tensor<4xf64>) {
  // expected-error @+1 {{'graph.mul' op operands of types 'tensor<4xf32>' and 'tensor<4xf64>' have different element types}}
  %0 = graph.mul %x, %y : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return
}

// -----

func.func @declared_result(%x: tensor<4x1xf32>, %y: tensor<3xf32>) {
  // expected-error @+1 {{'graph.sub' op result type 'tensor<4x4xf32>' does not match the inferred type 'tensor<4x3xf32>'}}
  %0 = graph.sub %x, %y : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @declared_element_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'graph.exp' op result type 'tensor<4xf16>' does not match the inferred type 'tensor<4xf32>'}}
  %0 = graph.exp %x : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @div_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f64, f32, bf16 or f16 values, but got 'tensor<4xi32>'}}
  %0 = graph.div %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----

func.func @add_bools(%x: tensor<4xi1>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f64, f32, bf16, f16, i64 or i32 values, but got 'tensor<4xi1>'}}
  %0 = graph.add %x, %x : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return
}

// -----

func.func @predicate(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'predicate' failed to satisfy constraint: string attribute whose value is one of lt, le, gt, ge, eq, ne}}
  %0 = graph.compare %x, %x {predicate = "lte"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----

func.func @compare_result(%x: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = graph.compare %x, %x {predicate = "lt"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @where_cond(%c: tensor<5xi1>, %x: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.where' op shapes [5] and [4, 3] cannot be broadcast together}}
  %0 = graph.where %c, %x, %x : (tensor<5xi1>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @where_values(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xi32>) {
  // expected-error @+1 {{'graph.where' op operands of types 'tensor<4xf32>' and 'tensor<4xi32>' have different element types}}
  %0 = graph.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----

func.func @exp_integers(%x: tensor<4xi64>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f64, f32, bf16 or f16 values, but got 'tensor<4xi64>'}}
  %0 = graph.exp %x : (tensor<4xi64>) -> tensor<4xi64>
  return
}

// -----

func.func @gelu(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'approximate' failed to satisfy constraint: string attribute whose value is one of none, tanh}}
  %0 = graph.gelu %x {approximate = "erf"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @cast(%x: tensor<4x3xi32>) {
  // expected-error @+1 {{'graph.cast' op must keep the operand's shape: shapes [4, 3] and [3, 4] differ}}
  %0 = graph.cast %x : (tensor<4x3xi32>) -> tensor<3x4xf32>
  return
}

//===----------------------------------------------------------------------===//
// Linear algebra and shape
//===----------------------------------------------------------------------===//

// -----

func.func @matmul(%x: tensor<?x4xf32>, %w: tensor<5x3xf32>) {
  // expected-error @+1 {{'graph.matmul' op matrix multiplication [?, 4] @ [5, 3]: inner dimensions 4 and 5 differ}}
  %0 = graph.matmul %x, %w : (tensor<?x4xf32>, tensor<5x3xf32>) -> tensor<?x3xf32>
  return
}

// -----

func.func @matmul_rank(%x: tensor<4xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.matmul' op matrix multiplication needs operands of rank 2 or more, got [4] @ [4, 3]}}
  %0 = graph.matmul %x, %w : (tensor<4xf32>, tensor<4x3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @matmul_batch(%x: tensor<2x4x5xf32>, %w: tensor<3x5x6xf32>) {
  // expected-error @+1 {{'graph.matmul' op matrix multiplication [2, 4, 5] @ [3, 5, 6]: batch dimensions cannot be broadcast}}
  %0 = graph.matmul %x, %w : (tensor<2x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x4x6xf32>
  return
}

// -----

func.func @reshape(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'graph.reshape' op cannot reshape [4, 6] (24 elements) into [5, 5] (25 elements)}}
  %0 = graph.reshape %x : (tensor<4x6xf32>) -> tensor<5x5xf32>
  return
}

// -----

func.func @reshape_element_type(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'graph.reshape' op changes the element type from 'tensor<4x6xf32>' to 'tensor<24xf16>'; use graph.cast}}
  %0 = graph.reshape %x : (tensor<4x6xf32>) -> tensor<24xf16>
  return
}

// -----

func.func @transpose(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'graph.transpose' op invalid permutation: axis 0 is out of range or repeated}}
  %0 = graph.transpose %x {permutation = array<i64: 0, 0>} : (tensor<4x6xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @transpose_rank(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'graph.transpose' op permutation of length 3 for a tensor of rank 2}}
  %0 = graph.transpose %x {permutation = array<i64: 0, 1, 2>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'graph.concat' op concat along axis 0: shapes [2, 3] and [2, 4] differ in dimension 1}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'graph.concat' op concat of tensors of different ranks: [2, 3] and [3]}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return
}

// -----

func.func @concat_element_types(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{'graph.concat' op operands of types 'tensor<2xf32>' and 'tensor<2xf16>' have different element types}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @concat_axis(%a: tensor<2xf32>) {
  // expected-error @+1 {{'graph.concat' op axis 1 is out of range for a tensor of rank 1 [2]}}
  %0 = graph.concat %a, %a {axis = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @concat_empty() {
  // expected-error @+1 {{'graph.concat' op needs at least one tensor to concatenate}}
  %0 = graph.concat {axis = 0 : i64} : () -> tensor<4xf32>
  return
}

// -----

func.func @slice(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'graph.slice' op slice [2, 9) is out of range for dimension 1 of [4, 8]}}
  %0 = graph.slice %x {axis = 1 : i64, start = 2 : i64, end = 9 : i64} : (tensor<4x8xf32>) -> tensor<4x7xf32>
  return
}

// -----

func.func @slice_dynamic(%x: tensor<?x8xf32>) {
  // expected-error @+1 {{'graph.slice' op slice bounds of the symbolic dimension ? must be non-negative and ordered}}
  %0 = graph.slice %x {axis = 0 : i64, start = 0 : i64, end = -1 : i64} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @arange() {
  // expected-error @+1 {{result #0 must be 1D tensor of 64-bit signless integer values, but got 'tensor<8xi32>'}}
  %0 = graph.arange : tensor<8xi32>
  return
}

// -----

func.func @one_hot(%ids: tensor<4xi32>) {
  // expected-error @+1 {{'graph.one_hot' op result shape [4, 5] should be the ids' shape followed by 10: [4, 10]}}
  %0 = graph.one_hot %ids {num_classes = 10 : i64} : (tensor<4xi32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @one_hot_classes(%ids: tensor<4xi32>) {
  // expected-error @+1 {{attribute 'num_classes' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = graph.one_hot %ids {num_classes = 0 : i64} : (tensor<4xi32>) -> tensor<4x0xf32>
  return
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// -----

func.func @reduce_axis(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.reduce_sum' op axis 2 is out of range for a tensor of rank 2 [4, 3]}}
  %0 = graph.reduce_sum %x {axes = array<i64: 2>, keepdim = false} : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @reduce_twice(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.reduce_max' op axis -1 is named twice}}
  %0 = graph.reduce_max %x {axes = array<i64: 1, -1>, keepdim = false} : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @reduce_keepdim(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.reduce_min' op result type 'tensor<4xf32>' does not match the inferred type 'tensor<4x1xf32>'}}
  %0 = graph.reduce_min %x {axes = array<i64: 1>, keepdim = true} : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @reduce_mean_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f64, f32, bf16 or f16 values, but got 'tensor<4xi32>'}}
  %0 = graph.reduce_mean %x {axes = array<i64>, keepdim = false} : (tensor<4xi32>) -> tensor<i32>
  return
}

// -----

func.func @softmax(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'graph.log_softmax' op axis -3 is out of range for a tensor of rank 2 [4, 3]}}
  %0 = graph.log_softmax %x {axis = -3 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

//===----------------------------------------------------------------------===//
// Neural-network primitives
//===----------------------------------------------------------------------===//

// -----

func.func @conv2d_channels(%x: tensor<?x3x8x8xf32>, %w: tensor<16x4x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op conv2d: the input has 3 channels but the weight [16, 4, 3, 3] with groups=1 expects 4}}
  %0 = graph.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x3x8x8xf32>, tensor<16x4x3x3xf32>) -> tensor<?x16x6x6xf32>
  return
}

// -----

func.func @conv2d_groups(%x: tensor<?x4x8x8xf32>, %w: tensor<6x1x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op conv2d: 4 groups do not divide the 6 output channels}}
  %0 = graph.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 4 : i64} : (tensor<?x4x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<?x6x6x6xf32>
  return
}

// -----

func.func @conv2d_kernel(%x: tensor<?x3x2x2xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op conv2d: kernel extent 3 exceeds the padded input 2 along axis 2}}
  %0 = graph.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x3x2x2xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x1x1xf32>
  return
}

// -----

func.func @conv2d_stride(%x: tensor<?x3x?x?xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op conv2d: kernel, stride and dilation must be positive and padding non-negative}}
  %0 = graph.conv2d %x, %w {stride = array<i64: 0, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x3x?x?xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x?x?xf32>
  return
}

// -----

func.func @conv2d_pair(%x: tensor<?x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{attribute 'stride' failed to satisfy constraint: i64 dense array attribute with exactly 2 elements}}
  %0 = graph.conv2d %x, %w {stride = array<i64: 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<?x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x6x6xf32>
  return
}

// -----

func.func @conv2d_rank(%x: tensor<3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d' op conv2d needs an NCHW input and an OIHW weight, got [3, 8, 8] and [16, 3, 3, 3]}}
  %0 = graph.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<16x6x6xf32>
  return
}

// -----

func.func @pool_padding(%x: tensor<?x3x8x8xf32>) {
  // expected-error @+1 {{'graph.max_pool2d' op pooling: padding 2 is more than half the kernel 3}}
  %0 = graph.max_pool2d %x {kernel = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 2, 2>} : (tensor<?x3x8x8xf32>) -> tensor<?x3x10x10xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d' op pooling needs an NCHW input, got [3, 8, 8]}}
  %0 = graph.avg_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>} : (tensor<3x8x8xf32>) -> tensor<3x4x4xf32>
  return
}

// -----

func.func @global_pool(%x: tensor<?x8x8xf32>) {
  // expected-error @+1 {{'graph.global_avg_pool2d' op global pooling needs an NCHW input, got [?, 8, 8]}}
  %0 = graph.global_avg_pool2d %x : (tensor<?x8x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @batch_norm_stats(%x: tensor<?x16x8x8xf32>) {
  // expected-error @+1 {{'graph.batch_norm_stats' op axis 4 is out of range for a tensor of rank 4 [?, 16, 8, 8]}}
  %0:2 = graph.batch_norm_stats %x {axes = array<i64: 0, 2, 4>} : (tensor<?x16x8x8xf32>) -> (tensor<16xf32>, tensor<16xf32>)
  return
}

// -----

func.func @batch_norm_stats_result(%x: tensor<?x16x8x8xf32>) {
  // expected-error @+1 {{'graph.batch_norm_stats' op result types 'tensor<16xf32>', 'tensor<1x16x1x1xf32>' do not match the inferred types 'tensor<16xf32>', 'tensor<16xf32>'}}
  %0:2 = graph.batch_norm_stats %x {axes = array<i64: 0, 2, 3>} : (tensor<?x16x8x8xf32>) -> (tensor<16xf32>, tensor<1x16x1x1xf32>)
  return
}

// -----

func.func @layer_norm_stats(%x: tensor<f32>) {
  // expected-error @+1 {{'graph.layer_norm_stats' op axis -1 is out of range for a tensor of rank 0 []}}
  %0:2 = graph.layer_norm_stats %x : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return
}

// -----

func.func @embedding(%ids: tensor<?x8xi32>, %table: tensor<50xf32>) {
  // expected-error @+1 {{'graph.embedding' op embedding table must have rank 2, got [50]}}
  %0 = graph.embedding %ids, %table : (tensor<?x8xi32>, tensor<50xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @embedding_ids(%ids: tensor<?x8xf32>, %table: tensor<50x16xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of i64 or i32 values, but got 'tensor<?x8xf32>'}}
  %0 = graph.embedding %ids, %table : (tensor<?x8xf32>, tensor<50x16xf32>) -> tensor<?x8x16xf32>
  return
}

// -----

func.func @dropout(%x: tensor<4xf32>) {
  // expected-error @+1 {{attribute 'p' failed to satisfy constraint: 64-bit float attribute whose value is in [0, 1)}}
  %0 = graph.dropout %x {p = 1.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @attention(%q: tensor<?x8x16xf32>, %k: tensor<?x8x32xf32>) {
  // expected-error @+1 {{'graph.attention' op attention: query [?, 8, 16] and key [?, 8, 32] have different head sizes}}
  %0 = graph.attention %q, %k, %k {causal = false} : (tensor<?x8x16xf32>, tensor<?x8x32xf32>, tensor<?x8x32xf32>) -> tensor<?x8x32xf32>
  return
}

// -----

func.func @attention_element_types(%q: tensor<?x8x16xf32>, %k: tensor<?x8x16xbf16>) {
  // expected-error @+1 {{'graph.attention' op operands of types 'tensor<?x8x16xf32>' and 'tensor<?x8x16xbf16>' have different element types}}
  %0 = graph.attention %q, %k, %k {causal = false} : (tensor<?x8x16xf32>, tensor<?x8x16xbf16>, tensor<?x8x16xbf16>) -> tensor<?x8x16xf32>
  return
}

func.func @attention_qkv_heads(%qkv: tensor<2x8x96xf32>) {
  // expected-error @+1 {{'graph.attention_qkv' op splits 32 columns into 3 heads}}
  %y, %lse = graph.attention_qkv %qkv {causal = true, heads = 3 : i64} : (tensor<2x8x96xf32>) -> (tensor<2x8x32xf32>, tensor<2x3x8xf32>)
  return
}

// -----

func.func @attention_qkv_statistics(%qkv: tensor<2x8x96xf32>) {
  // expected-error @+1 {{'graph.attention_qkv' op the row statistics should be 'tensor<2x2x8xf32>', not 'tensor<2x8x2xf32>'}}
  %y, %lse = graph.attention_qkv %qkv {causal = true, heads = 2 : i64} : (tensor<2x8x96xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x2xf32>)
  return
}

// -----

func.func @attention_qkv_packed(%qkv: tensor<2x8x95xf32>) {
  // expected-error @+1 {{'graph.attention_qkv' op takes a static qkv [B, T, 3 * C], not 'tensor<2x8x95xf32>'}}
  %y, %lse = graph.attention_qkv %qkv {causal = true, heads = 2 : i64} : (tensor<2x8x95xf32>) -> (tensor<2x8x32xf32>, tensor<2x2x8xf32>)
  return
}

// -----

func.func @attention_qkv_grad(%qkv: tensor<2x8x96xf32>, %y: tensor<2x8x32xf32>, %lse: tensor<2x2x8xf32>, %g: tensor<2x8x16xf32>) {
  // expected-error @+1 {{'graph.attention_qkv_grad' op takes the result's gradient in the result's type}}
  %d = graph.attention_qkv_grad %qkv, %y, %lse, %g {causal = true, heads = 2 : i64} : tensor<2x8x96xf32>, tensor<2x8x32xf32>, tensor<2x2x8xf32>, tensor<2x8x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Losses and metrics
//===----------------------------------------------------------------------===//

// -----

func.func @cross_entropy(%logits: tensor<?x8x50xf32>, %t: tensor<?xi32>) {
  // expected-error @+1 {{'graph.cross_entropy' op targets [?] do not match logits [?, 8, 50]: expected targets of shape [?, 8]}}
  %0 = graph.cross_entropy %logits, %t {reduction = "mean", label_smoothing = 0.0 : f64} : (tensor<?x8x50xf32>, tensor<?xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_none(%logits: tensor<?x10xf32>, %t: tensor<?xi32>) {
  // expected-error @+1 {{'graph.cross_entropy' op result type 'tensor<f32>' does not match the inferred type 'tensor<?xf32>'}}
  %0 = graph.cross_entropy %logits, %t {reduction = "none", label_smoothing = 0.0 : f64} : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_reduction(%logits: tensor<?x10xf32>, %t: tensor<?xi32>) {
  // expected-error @+1 {{attribute 'reduction' failed to satisfy constraint: string attribute whose value is one of mean, sum, none}}
  %0 = graph.cross_entropy %logits, %t {reduction = "avg", label_smoothing = 0.0 : f64} : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return
}

// -----

func.func @cross_entropy_smoothing(%logits: tensor<?x10xf32>, %t: tensor<?xi32>) {
  // expected-error @+1 {{attribute 'label_smoothing' failed to satisfy constraint: 64-bit float attribute whose value is in [0, 1)}}
  %0 = graph.cross_entropy %logits, %t {reduction = "mean", label_smoothing = -0.1 : f64} : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
  return
}

// -----

func.func @nll_loss(%logp: tensor<4x10xf32>, %t: tensor<5xi64>) {
  // expected-error @+1 {{'graph.nll_loss' op targets [5] do not match logits [4, 10]: expected targets of shape [4]}}
  %0 = graph.nll_loss %logp, %t {reduction = "sum"} : (tensor<4x10xf32>, tensor<5xi64>) -> tensor<f32>
  return
}

// -----

func.func @nll_loss_scalar(%logp: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'graph.nll_loss' op logits must have a class axis, got a scalar}}
  %0 = graph.nll_loss %logp, %t {reduction = "sum"} : (tensor<f32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @mse_loss(%a: tensor<?x4xf32>, %b: tensor<?x5xf32>) {
  // expected-error @+1 {{'graph.mse_loss' op shapes [?, 4] and [?, 5] differ}}
  %0 = graph.mse_loss %a, %b {reduction = "mean"} : (tensor<?x4xf32>, tensor<?x5xf32>) -> tensor<f32>
  return
}

// -----

func.func @bce_element_types(%a: tensor<4xf32>, %b: tensor<4xf64>) {
  // expected-error @+1 {{'graph.bce_with_logits' op operands of types 'tensor<4xf32>' and 'tensor<4xf64>' have different element types}}
  %0 = graph.bce_with_logits %a, %b {reduction = "mean"} : (tensor<4xf32>, tensor<4xf64>) -> tensor<f32>
  return
}

// -----

func.func @l1_loss_none(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'graph.l1_loss' op result type 'tensor<f32>' does not match the inferred type 'tensor<4xf32>'}}
  %0 = graph.l1_loss %a, %b {reduction = "none"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @accuracy(%logits: tensor<4x10xf32>, %t: tensor<4x10xi32>) {
  // expected-error @+1 {{'graph.accuracy' op targets [4, 10] do not match logits [4, 10]: expected targets of shape [4]}}
  %0 = graph.accuracy %logits, %t : (tensor<4x10xf32>, tensor<4x10xi32>) -> tensor<f32>
  return
}

// -----

func.func @accuracy_result(%logits: tensor<4x10xf64>, %t: tensor<4xi32>) {
  // expected-error @+1 {{result #0 must be 0D tensor of 32-bit float values, but got 'tensor<f64>'}}
  %0 = graph.accuracy %logits, %t : (tensor<4x10xf64>, tensor<4xi32>) -> tensor<f64>
  return
}

// -----

func.func @matmul_transposed_shapes(%x: tensor<8x4xf32>, %w: tensor<4x5xf32>) {
  // expected-error @+1 {{'graph.matmul_transposed' op expects [..., M, K] and [N, K] to give [..., M, N]}}
  %0 = graph.matmul_transposed %x, %w : (tensor<8x4xf32>, tensor<4x5xf32>) -> tensor<8x5xf32>
  return
}

// -----

func.func @matmul_transposed_rank(%x: tensor<8x4xf32>, %w: tensor<2x5x4xf32>) {
  // expected-error @+1 {{'graph.matmul_transposed' op takes an lhs of rank 2 or more and an rhs of rank 2}}
  %0 = graph.matmul_transposed %x, %w : (tensor<8x4xf32>, tensor<2x5x4xf32>) -> tensor<8x5xf32>
  return
}

// -----

func.func @batch_norm_channels(%x: tensor<8x4x2x2xf32>, %w: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm' op expects per-channel tensors [4] of 'f32', got 'tensor<3xf32>'}}
  %y, %m, %v = graph.batch_norm %x, %w, %w {epsilon = 1.0e-05 : f64} : (tensor<8x4x2x2xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<8x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @batch_norm_grad_type(%x: tensor<8x4xf32>, %w: tensor<4xf32>, %g: tensor<8x4xbf16>) {
  // expected-error @+1 {{'graph.batch_norm_grad' op grad must have the input's type}}
  %dx, %dw, %db = graph.batch_norm_grad %x, %w, %w, %w, %g {epsilon = 1.0e-05 : f64} : tensor<8x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8x4xbf16>
  return
}
