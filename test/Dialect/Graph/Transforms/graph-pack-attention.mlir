// RUN: sinter-opt %s -graph-pack-attention -split-input-file | FileCheck %s
// RUN: sinter-opt %s -graph-pack-attention -graph-autodiff -split-input-file | FileCheck %s --check-prefix=GRAD

// Where cuDNN attends (CUDA, compute bf16), GPT's attention over one
// projection (q, k and v its three 32-wide column blocks, two heads of 16)
// is graph.attention_qkv of the projection; the transposed-back, reshaped
// output is its result, and no slice, reshape or transpose is left. Its
// gradient reads the forward op's result and row statistics.
// CHECK-LABEL: graph.model @gpt
// CHECK:       %[[QKV:.*]] = graph.param "qkv"
// CHECK-NEXT:  %[[Y:.*]], %[[LSE:.*]] = graph.attention_qkv %[[QKV]] {causal = true, heads = 2 : i64} : (tensor<2x8x96xf32>) -> (tensor<2x8x32xf32>, tensor<2x2x8xf32>)
// CHECK-NEXT:  %[[M:.*]] = graph.mul %[[Y]], %[[Y]]
// CHECK-NOT:   graph.slice
// CHECK-NOT:   graph.transpose
// CHECK-NOT:   graph.reshape
// CHECK-NOT:   graph.attention %
// GRAD-LABEL:  graph.model @gpt phase "train"
// GRAD:        %[[Y:.*]], %[[LSE:.*]] = graph.attention_qkv %[[QKV:[^ ]*]]
// GRAD:        %[[D:.*]] = graph.attention_qkv_grad %[[QKV]], %[[Y]], %[[LSE]], %{{.*}} {causal = true, heads = 2 : i64}
// GRAD:        graph.gradient "qkv", %[[D]] : tensor<2x8x96xf32>
module attributes {sinter.device = "cuda", sinter.compute = "bf16"} {
graph.model @gpt phase "train" {
  %qkv = graph.param "qkv" {init = "normal", init_args = array<f64: 0.0, 1.0>} : tensor<2x8x96xf32>
  %q0 = graph.slice %qkv {axis = 2 : i64, start = 0 : i64, end = 32 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %q1 = graph.reshape %q0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %q = graph.transpose %q1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %k0 = graph.slice %qkv {axis = 2 : i64, start = 32 : i64, end = 64 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %k1 = graph.reshape %k0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %k = graph.transpose %k1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %v0 = graph.slice %qkv {axis = -1 : i64, start = -32 : i64, end = 96 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %v1 = graph.reshape %v0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %v = graph.transpose %v1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %o = graph.attention %q, %k, %v {causal = true} : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
  %o1 = graph.transpose %o {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x2x8x16xf32>) -> tensor<2x8x2x16xf32>
  %y = graph.reshape %o1 : (tensor<2x8x2x16xf32>) -> tensor<2x8x32xf32>
  %m = graph.mul %y, %y : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %l = graph.reduce_mean %m {axes = array<i64>, keepdim = false} : (tensor<2x8x32xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// A user that reads the heads-major output itself gets it from the packed
// result, split into heads and transposed.
// CHECK-LABEL: graph.model @heads_major
// CHECK:       %[[Y:.*]], %{{.*}} = graph.attention_qkv %{{.*}} {causal = false, heads = 2 : i64}
// CHECK-NEXT:  %[[S:.*]] = graph.reshape %[[Y]] : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
// CHECK-NEXT:  %[[T:.*]] = graph.transpose %[[S]] {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
// CHECK-NEXT:  graph.reduce_mean %[[T]]
module attributes {sinter.device = "cuda", sinter.compute = "bf16"} {
graph.model @heads_major phase "train" {
  %qkv = graph.param "qkv" {init = "normal", init_args = array<f64: 0.0, 1.0>} : tensor<2x8x96xf32>
  %q0 = graph.slice %qkv {axis = 2 : i64, start = 0 : i64, end = 32 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %q1 = graph.reshape %q0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %q = graph.transpose %q1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %k0 = graph.slice %qkv {axis = 2 : i64, start = 32 : i64, end = 64 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %k1 = graph.reshape %k0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %k = graph.transpose %k1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %v0 = graph.slice %qkv {axis = 2 : i64, start = 64 : i64, end = 96 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %v1 = graph.reshape %v0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %v = graph.transpose %v1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %o = graph.attention %q, %k, %v {causal = false} : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
  %l = graph.reduce_mean %o {axes = array<i64>, keepdim = false} : (tensor<2x2x8x16xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// Not packed: on the CPU (no fused attention), and where the key and value
// blocks are swapped (the call reads q, k, v in that order).
// CHECK-LABEL: graph.model @cpu
// CHECK:       graph.attention %
// CHECK-NOT:   graph.attention_qkv
module attributes {sinter.device = "cpu"} {
graph.model @cpu phase "train" {
  %qkv = graph.param "qkv" {init = "normal", init_args = array<f64: 0.0, 1.0>} : tensor<2x8x96xf32>
  %q0 = graph.slice %qkv {axis = 2 : i64, start = 0 : i64, end = 32 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %q1 = graph.reshape %q0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %q = graph.transpose %q1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %k0 = graph.slice %qkv {axis = 2 : i64, start = 32 : i64, end = 64 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %k1 = graph.reshape %k0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %k = graph.transpose %k1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %v0 = graph.slice %qkv {axis = 2 : i64, start = 64 : i64, end = 96 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %v1 = graph.reshape %v0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %v = graph.transpose %v1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %o = graph.attention %q, %k, %v {causal = true} : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
  %l = graph.reduce_mean %o {axes = array<i64>, keepdim = false} : (tensor<2x2x8x16xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// CHECK-LABEL: graph.model @swapped
// CHECK:       graph.attention %
// CHECK-NOT:   graph.attention_qkv
module attributes {sinter.device = "cuda", sinter.compute = "bf16"} {
graph.model @swapped phase "train" {
  %qkv = graph.param "qkv" {init = "normal", init_args = array<f64: 0.0, 1.0>} : tensor<2x8x96xf32>
  %q0 = graph.slice %qkv {axis = 2 : i64, start = 0 : i64, end = 32 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %q1 = graph.reshape %q0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %q = graph.transpose %q1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %k0 = graph.slice %qkv {axis = 2 : i64, start = 64 : i64, end = 96 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %k1 = graph.reshape %k0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %k = graph.transpose %k1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %v0 = graph.slice %qkv {axis = 2 : i64, start = 32 : i64, end = 64 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %v1 = graph.reshape %v0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %v = graph.transpose %v1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %o = graph.attention %q, %k, %v {causal = true} : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
  %l = graph.reduce_mean %o {axes = array<i64>, keepdim = false} : (tensor<2x2x8x16xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// In f32 on CUDA, Sinter's own fused kernels attend over the projection for
// head sizes 32 and 64; the gradient reads the row statistics as in bf16.
// CHECK-LABEL: graph.model @f32_head_32
// CHECK:       graph.attention_qkv %{{.*}} {causal = true, heads = 2 : i64} : (tensor<2x8x192xf32>) -> (tensor<2x8x64xf32>, tensor<2x2x8xf32>)
// CHECK-NOT:   graph.attention %
// GRAD-LABEL:  graph.model @f32_head_32
// GRAD:        %[[Y:.*]], %[[LSE:.*]] = graph.attention_qkv %[[QKV:[^ ]*]]
// GRAD:        graph.attention_qkv_grad %[[QKV]], %[[Y]], %[[LSE]], %{{.*}} {causal = true, heads = 2 : i64}
module attributes {sinter.device = "cuda"} {
graph.model @f32_head_32 phase "train" {
  %qkv = graph.param "qkv" {init = "normal", init_args = array<f64: 0.0, 1.0>} : tensor<2x8x192xf32>
  %q0 = graph.slice %qkv {axis = 2 : i64, start = 0 : i64, end = 64 : i64} : (tensor<2x8x192xf32>) -> tensor<2x8x64xf32>
  %q1 = graph.reshape %q0 : (tensor<2x8x64xf32>) -> tensor<2x8x2x32xf32>
  %q = graph.transpose %q1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x32xf32>) -> tensor<2x2x8x32xf32>
  %k0 = graph.slice %qkv {axis = 2 : i64, start = 64 : i64, end = 128 : i64} : (tensor<2x8x192xf32>) -> tensor<2x8x64xf32>
  %k1 = graph.reshape %k0 : (tensor<2x8x64xf32>) -> tensor<2x8x2x32xf32>
  %k = graph.transpose %k1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x32xf32>) -> tensor<2x2x8x32xf32>
  %v0 = graph.slice %qkv {axis = 2 : i64, start = 128 : i64, end = 192 : i64} : (tensor<2x8x192xf32>) -> tensor<2x8x64xf32>
  %v1 = graph.reshape %v0 : (tensor<2x8x64xf32>) -> tensor<2x8x2x32xf32>
  %v = graph.transpose %v1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x32xf32>) -> tensor<2x2x8x32xf32>
  %o = graph.attention %q, %k, %v {causal = true} : (tensor<2x2x8x32xf32>, tensor<2x2x8x32xf32>, tensor<2x2x8x32xf32>) -> tensor<2x2x8x32xf32>
  %l = graph.reduce_mean %o {axes = array<i64>, keepdim = false} : (tensor<2x2x8x32xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}

// -----

// Other head sizes keep the spelled-out attention in f32.
// CHECK-LABEL: graph.model @f32_head_16
// CHECK:       graph.attention %
// CHECK-NOT:   graph.attention_qkv
module attributes {sinter.device = "cuda", sinter.compute = "f32"} {
graph.model @f32_head_16 phase "train" {
  %qkv = graph.param "qkv" {init = "normal", init_args = array<f64: 0.0, 1.0>} : tensor<2x8x96xf32>
  %q0 = graph.slice %qkv {axis = 2 : i64, start = 0 : i64, end = 32 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %q1 = graph.reshape %q0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %q = graph.transpose %q1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %k0 = graph.slice %qkv {axis = 2 : i64, start = 32 : i64, end = 64 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %k1 = graph.reshape %k0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %k = graph.transpose %k1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %v0 = graph.slice %qkv {axis = 2 : i64, start = 64 : i64, end = 96 : i64} : (tensor<2x8x96xf32>) -> tensor<2x8x32xf32>
  %v1 = graph.reshape %v0 : (tensor<2x8x32xf32>) -> tensor<2x8x2x16xf32>
  %v = graph.transpose %v1 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<2x8x2x16xf32>) -> tensor<2x2x8x16xf32>
  %o = graph.attention %q, %k, %v {causal = true} : (tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x2x8x16xf32>
  %l = graph.reduce_mean %o {axes = array<i64>, keepdim = false} : (tensor<2x2x8x16xf32>) -> tensor<f32>
  graph.loss %l : tensor<f32>
}
}
