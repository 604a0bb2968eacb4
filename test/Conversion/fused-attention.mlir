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

// Elsewhere (here f32 on CUDA) the forward pass is spelled out in linalg.
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
