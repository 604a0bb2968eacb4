// RUN: sinter-opt %s -convert-graph-to-linalg -split-input-file | FileCheck %s

// On CUDA with compute: BF16, attention and its gradients are cuDNN's fused
// kernels: the operands rounded to bf16 (truncf), the library ops, and
// their results widened back to the graph's f32.
// CHECK-LABEL: func.func @forward_and_back(
// CHECK-COUNT-3: arith.truncf
// CHECK:       %[[O:.*]] = train.attention_forward %{{.*}}, %{{.*}}, %{{.*}} {causal = true} : tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16> -> tensor<2x4x64x16xbf16>
// CHECK:       arith.extf
// CHECK-COUNT-4: arith.truncf
// CHECK:       %[[G:.*]]:3 = train.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal = true} : {{.*}} -> tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>, tensor<2x4x64x16xbf16>
// CHECK-COUNT-3: arith.extf
// CHECK-NOT:   linalg.softmax
// CHECK-NOT:   linalg.batch_matmul
module attributes {sinter.device = "cuda", sinter.compute = "bf16"} {
func.func @forward_and_back(%q: tensor<2x4x64x16xf32>, %g: tensor<2x4x64x16xf32>)
    -> (tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>) {
  %o = graph.attention %q, %q, %q {causal = true}
      : (tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>) -> tensor<2x4x64x16xf32>
  %dq, %dk, %dv = graph.attention_grad %q, %q, %q, %g {causal = true}
      : tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>
  return %o, %dq, %dk, %dv : tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>
}
}

// -----

// Elsewhere (here f32 on CUDA with heads of 16) the forward pass is
// spelled out in linalg.
// CHECK-LABEL: func.func @f32(
// CHECK-NOT:   train.attention_forward
// CHECK:       linalg.batch_matmul
module attributes {sinter.device = "cuda"} {
func.func @f32(%q: tensor<2x4x64x16xf32>) -> tensor<2x4x64x16xf32> {
  %o = graph.attention %q, %q, %q {causal = true}
      : (tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>) -> tensor<2x4x64x16xf32>
  return %o : tensor<2x4x64x16xf32>
}
}

// -----

// Over one packed projection: the projection rounded to bf16 once, the
// forward call asked for the row statistics (f32) because the gradient
// reads them, the gradient of the projection in its layout. Without a
// reader of the statistics (evaluation), the call gives the result only.
// CHECK-LABEL: func.func @packed(
// CHECK:       %[[QKV:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x64x96xbf16>)
// CHECK:       %[[F:.*]]:2 = train.attention_qkv_forward %[[QKV]] {causal = true, heads = 2 : i64} : tensor<2x64x96xbf16> -> tensor<2x64x32xbf16>, tensor<2x2x64xf32>
// CHECK:       train.attention_qkv_backward %{{.*}}, %{{.*}}, %[[F]]#1, %{{.*}} {causal = true, heads = 2 : i64} : tensor<2x64x96xbf16>, tensor<2x64x32xbf16>, tensor<2x2x64xf32>, tensor<2x64x32xbf16> -> tensor<2x64x96xbf16>
// CHECK-LABEL: func.func @packed_eval(
// CHECK:       train.attention_qkv_forward %{{.*}} {causal = false, heads = 2 : i64} : tensor<2x64x96xbf16> -> tensor<2x64x32xbf16>
module attributes {sinter.device = "cuda", sinter.compute = "bf16"} {
func.func @packed(%qkv: tensor<2x64x96xf32>, %g: tensor<2x64x32xf32>) -> tensor<2x64x96xf32> {
  %y, %lse = graph.attention_qkv %qkv {causal = true, heads = 2 : i64}
      : (tensor<2x64x96xf32>) -> (tensor<2x64x32xf32>, tensor<2x2x64xf32>)
  %d = graph.attention_qkv_grad %qkv, %y, %lse, %g {causal = true, heads = 2 : i64}
      : tensor<2x64x96xf32>, tensor<2x64x32xf32>, tensor<2x2x64xf32>, tensor<2x64x32xf32>
  return %d : tensor<2x64x96xf32>
}
func.func @packed_eval(%qkv: tensor<2x64x96xf32>) -> tensor<2x64x32xf32> {
  %y, %lse = graph.attention_qkv %qkv {causal = false, heads = 2 : i64}
      : (tensor<2x64x96xf32>) -> (tensor<2x64x32xf32>, tensor<2x2x64xf32>)
  return %y : tensor<2x64x32xf32>
}
}

// -----

// In f32 with heads of 32 or 64, Sinter's own fused kernels: the library
// ops on the f32 tensors as they are, nothing rounded.
// CHECK-LABEL: func.func @f32_fused(
// CHECK-NOT:   arith.truncf
// CHECK:       train.attention_forward %{{.*}}, %{{.*}}, %{{.*}} {causal = true} : tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32> -> tensor<2x4x64x32xf32>
// CHECK:       train.attention_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {causal = true} : {{.*}} -> tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>
// CHECK-NOT:   arith.extf
// CHECK-NOT:   linalg.batch_matmul
module attributes {sinter.device = "cuda"} {
func.func @f32_fused(%q: tensor<2x4x64x32xf32>, %g: tensor<2x4x64x32xf32>)
    -> (tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>) {
  %o = graph.attention %q, %q, %q {causal = true}
      : (tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>) -> tensor<2x4x64x32xf32>
  %dq, %dk, %dv = graph.attention_grad %q, %q, %q, %g {causal = true}
      : tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>
  return %o, %dq, %dk, %dv : tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>, tensor<2x4x64x32xf32>
}
}

// -----

// The packed form in f32: the projection as it is, the f32 library ops.
// CHECK-LABEL: func.func @packed_f32(
// CHECK-NOT:   arith.truncf
// CHECK:       %[[F:.*]]:2 = train.attention_qkv_forward %{{.*}} {causal = true, heads = 2 : i64} : tensor<2x64x192xf32> -> tensor<2x64x64xf32>, tensor<2x2x64xf32>
// CHECK:       train.attention_qkv_backward %{{.*}}, %{{.*}}, %[[F]]#1, %{{.*}} {causal = true, heads = 2 : i64} : tensor<2x64x192xf32>, tensor<2x64x64xf32>, tensor<2x2x64xf32>, tensor<2x64x64xf32> -> tensor<2x64x192xf32>
module attributes {sinter.device = "cuda"} {
func.func @packed_f32(%qkv: tensor<2x64x192xf32>, %g: tensor<2x64x64xf32>) -> tensor<2x64x192xf32> {
  %y, %lse = graph.attention_qkv %qkv {causal = true, heads = 2 : i64}
      : (tensor<2x64x192xf32>) -> (tensor<2x64x64xf32>, tensor<2x2x64xf32>)
  %d = graph.attention_qkv_grad %qkv, %y, %lse, %g {causal = true, heads = 2 : i64}
      : tensor<2x64x192xf32>, tensor<2x64x64xf32>, tensor<2x2x64xf32>, tensor<2x64x64xf32>
  return %d : tensor<2x64x192xf32>
}
}
