// RUN: sinter-opt %s -graph-expand-attention-grad -split-input-file | FileCheck %s

// For the CPU, attention's gradients are spelled out in graph ops: the
// probabilities recomputed (a causal `where` on the scores, the softmax),
// then the three matmuls of the gradients.
// CHECK-LABEL: func.func @cpu(
// CHECK-NOT:   graph.attention_grad
// CHECK:       graph.where
// CHECK:       graph.softmax
// CHECK-COUNT-3: graph.matmul
// CHECK:       return
module attributes {sinter.device = "cpu"} {
func.func @cpu(%q: tensor<2x4x8x16xf32>, %g: tensor<2x4x8x16xf32>)
    -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %dq, %dk, %dv = graph.attention_grad %q, %q, %q, %g {causal = true}
      : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
  return %dq, %dk, %dv : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}
}

// -----

// On CUDA with compute: BF16, cuDNN differentiates attention itself: the op
// stays whole.
// CHECK-LABEL: func.func @cuda_bf16(
// CHECK:       graph.attention_grad
// CHECK-NOT:   graph.softmax
module attributes {sinter.device = "cuda", sinter.compute = "bf16"} {
func.func @cuda_bf16(%q: tensor<2x4x8x16xf32>, %g: tensor<2x4x8x16xf32>)
    -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %dq, %dk, %dv = graph.attention_grad %q, %q, %q, %g {causal = true}
      : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
  return %dq, %dk, %dv : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}
}

// -----

// cuDNN's fused attention takes head sizes that are multiples of 8 (up to
// 128), and f32 steps with heads of 16 (Sinter's f32 kernels take 32 and
// 64): both are spelled out.
// CHECK-LABEL: func.func @head_of_12(
// CHECK-NOT:   graph.attention_grad
// CHECK:       graph.softmax
// CHECK-LABEL: func.func @f32(
// CHECK-NOT:   graph.attention_grad
// CHECK:       graph.softmax
module attributes {sinter.device = "cuda", sinter.compute = "bf16"} {
func.func @head_of_12(%q: tensor<2x4x8x12xf32>, %g: tensor<2x4x8x12xf32>)
    -> (tensor<2x4x8x12xf32>, tensor<2x4x8x12xf32>, tensor<2x4x8x12xf32>) {
  %dq, %dk, %dv = graph.attention_grad %q, %q, %q, %g {causal = false}
      : tensor<2x4x8x12xf32>, tensor<2x4x8x12xf32>, tensor<2x4x8x12xf32>, tensor<2x4x8x12xf32>
  return %dq, %dk, %dv : tensor<2x4x8x12xf32>, tensor<2x4x8x12xf32>, tensor<2x4x8x12xf32>
}
}
module attributes {sinter.device = "cuda"} {
func.func @f32(%q: tensor<2x4x8x16xf32>, %g: tensor<2x4x8x16xf32>)
    -> (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) {
  %dq, %dk, %dv = graph.attention_grad %q, %q, %q, %g {causal = false}
      : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
  return %dq, %dk, %dv : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>
}
}

// -----

// One query against one key: cuDNN's backward pass refuses it, so it is
// spelled out even on CUDA with compute: BF16.
// CHECK-LABEL: func.func @one_token(
// CHECK-NOT:   graph.attention_grad
// CHECK:       graph.softmax
module attributes {sinter.device = "cuda", sinter.compute = "bf16"} {
func.func @one_token(%q: tensor<2x4x1x16xf32>, %g: tensor<2x4x1x16xf32>)
    -> (tensor<2x4x1x16xf32>, tensor<2x4x1x16xf32>, tensor<2x4x1x16xf32>) {
  %dq, %dk, %dv = graph.attention_grad %q, %q, %q, %g {causal = false}
      : tensor<2x4x1x16xf32>, tensor<2x4x1x16xf32>, tensor<2x4x1x16xf32>, tensor<2x4x1x16xf32>
  return %dq, %dk, %dv : tensor<2x4x1x16xf32>, tensor<2x4x1x16xf32>, tensor<2x4x1x16xf32>
}
}

// -----

// In f32 on CUDA, self-attention with heads of 32 or 64 is Sinter's own
// fused kernels' and keeps its gradient whole; a key sequence of another
// length than the queries' is spelled out.
// CHECK-LABEL: func.func @f32_head_32(
// CHECK:       graph.attention_grad
// CHECK-LABEL: func.func @f32_cross(
// CHECK-NOT:   graph.attention_grad
// CHECK:       graph.softmax
module attributes {sinter.device = "cuda"} {
func.func @f32_head_32(%q: tensor<2x4x8x32xf32>, %g: tensor<2x4x8x32xf32>)
    -> (tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>) {
  %dq, %dk, %dv = graph.attention_grad %q, %q, %q, %g {causal = true}
      : tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>
  return %dq, %dk, %dv : tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>, tensor<2x4x8x32xf32>
}
func.func @f32_cross(%q: tensor<2x4x8x32xf32>, %k: tensor<2x4x16x32xf32>, %g: tensor<2x4x8x32xf32>)
    -> (tensor<2x4x8x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>) {
  %dq, %dk, %dv = graph.attention_grad %q, %k, %k, %g {causal = false}
      : tensor<2x4x8x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x8x32xf32>
  return %dq, %dk, %dv : tensor<2x4x8x32xf32>, tensor<2x4x16x32xf32>, tensor<2x4x16x32xf32>
}
}
