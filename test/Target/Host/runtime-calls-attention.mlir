// RUN: sinter-opt %s -sinter-runtime-calls -split-input-file | FileCheck %s

// cuDNN's fused attention on buffers becomes the runtime's calls: the
// inputs' and results' device pointers, then batch, heads, Tq, Tk, D, Dv
// and causal.
// CHECK-LABEL: func.func @attention(
// CHECK:         call @sinter_cuda_attention_bf16(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c2_i64, %c4_i64, %c64_i64, %c32_i64, %c16_i64, %c8_i64, %c1_i64)
// CHECK:         call @sinter_cuda_attention_backward_bf16(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c2_i64{{.*}}, %c4_i64{{.*}}, %c64_i64{{.*}}, %c32_i64{{.*}}, %c16_i64{{.*}}, %c8_i64{{.*}}, %c0_i64{{.*}})
// CHECK-NOT:     train.
module attributes {sinter.device = "cuda"} {
func.func @attention(%q: memref<2x4x64x16xbf16>, %k: memref<2x4x32x16xbf16>,
                     %v: memref<2x4x32x8xbf16>, %o: memref<2x4x64x8xbf16>,
                     %dq: memref<2x4x64x16xbf16>, %dk: memref<2x4x32x16xbf16>,
                     %dv: memref<2x4x32x8xbf16>) {
  train.attention_forward %q, %k, %v into %o {causal = true}
      : memref<2x4x64x16xbf16>, memref<2x4x32x16xbf16>, memref<2x4x32x8xbf16>
      into memref<2x4x64x8xbf16>
  train.attention_backward %q, %k, %v, %o into %dq, %dk, %dv {causal = false}
      : memref<2x4x64x16xbf16>, memref<2x4x32x16xbf16>, memref<2x4x32x8xbf16>, memref<2x4x64x8xbf16>
      into memref<2x4x64x16xbf16>, memref<2x4x32x16xbf16>, memref<2x4x32x8xbf16>
  return
}
}

// -----

// Over one packed projection: qkv, the output, the statistics (null where
// the forward call is not asked for them), then for the backward call the
// output's gradient and qkv's; then batch, T, heads, head size and causal.
// CHECK-LABEL: func.func @packed(
// CHECK-SAME:    %[[QKV:[^:]*]]: memref<2x64x96xbf16>, %[[Y:[^:]*]]: memref<2x64x32xbf16>, %[[LSE:[^:]*]]: memref<2x2x64xf32>
// CHECK:         call @sinter_cuda_attention_qkv_bf16(%{{.+}}, %{{.+}}, %{{[0-9]+}}, %c2_i64, %c64_i64, %c2_i64{{.*}}, %c16_i64, %c1_i64)
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         call @sinter_cuda_attention_qkv_bf16(%{{.+}}, %{{.+}}, %[[NULL]], %c2_i64{{.*}}, %c64_i64{{.*}}, %c2_i64{{.*}}, %c16_i64{{.*}}, %c0_i64{{.*}})
// CHECK:         call @sinter_cuda_attention_qkv_backward_bf16(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c2_i64{{.*}}, %c64_i64{{.*}}, %c2_i64{{.*}}, %c16_i64{{.*}}, %c1_i64{{.*}})
// CHECK-NOT:     train.
module attributes {sinter.device = "cuda"} {
func.func @packed(%qkv: memref<2x64x96xbf16>, %y: memref<2x64x32xbf16>, %lse: memref<2x2x64xf32>,
                  %dy: memref<2x64x32xbf16>, %dqkv: memref<2x64x96xbf16>) {
  train.attention_qkv_forward %qkv into %y, %lse {causal = true, heads = 2 : i64}
      : memref<2x64x96xbf16> into memref<2x64x32xbf16>, memref<2x2x64xf32>
  train.attention_qkv_forward %qkv into %y {causal = false, heads = 2 : i64}
      : memref<2x64x96xbf16> into memref<2x64x32xbf16>
  train.attention_qkv_backward %qkv, %y, %lse, %dy into %dqkv {causal = true, heads = 2 : i64}
      : memref<2x64x96xbf16>, memref<2x64x32xbf16>, memref<2x2x64xf32>, memref<2x64x32xbf16>
      into memref<2x64x96xbf16>
  return
}
}

// -----

// In f32 the same calls are Sinter's own kernels', with the same arguments.
// CHECK-LABEL: func.func @packed_f32(
// CHECK:         call @sinter_cuda_attention_qkv_f32(%{{.+}}, %{{.+}}, %{{[0-9]+}}, %c2_i64, %c64_i64, %c2_i64{{.*}}, %c32_i64, %c1_i64)
// CHECK:         call @sinter_cuda_attention_qkv_backward_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c2_i64{{.*}}, %c64_i64{{.*}}, %c2_i64{{.*}}, %c32_i64{{.*}}, %c1_i64{{.*}})
// CHECK-NOT:     _bf16
module attributes {sinter.device = "cuda"} {
func.func @packed_f32(%qkv: memref<2x64x192xf32>, %y: memref<2x64x64xf32>, %lse: memref<2x2x64xf32>,
                      %dy: memref<2x64x64xf32>, %dqkv: memref<2x64x192xf32>) {
  train.attention_qkv_forward %qkv into %y, %lse {causal = true, heads = 2 : i64}
      : memref<2x64x192xf32> into memref<2x64x64xf32>, memref<2x2x64xf32>
  train.attention_qkv_backward %qkv, %y, %lse, %dy into %dqkv {causal = true, heads = 2 : i64}
      : memref<2x64x192xf32>, memref<2x64x64xf32>, memref<2x2x64xf32>, memref<2x64x64xf32>
      into memref<2x64x192xf32>
  return
}
}

// -----

// Heads-major in f32: the same arguments as the bf16 calls.
// CHECK-LABEL: func.func @heads_major_f32(
// CHECK:         call @sinter_cuda_attention_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c2_i64, %c4_i64, %c64_i64, %c64_i64{{.*}}, %c32_i64, %c32_i64{{.*}}, %c1_i64)
// CHECK:         call @sinter_cuda_attention_backward_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c2_i64{{.*}}, %c4_i64{{.*}}, %c64_i64{{.*}}, %c64_i64{{.*}}, %c32_i64{{.*}}, %c32_i64{{.*}}, %c0_i64{{.*}})
module attributes {sinter.device = "cuda"} {
func.func @heads_major_f32(%q: memref<2x4x64x32xf32>, %o: memref<2x4x64x32xf32>,
                           %dq: memref<2x4x64x32xf32>, %dk: memref<2x4x64x32xf32>,
                           %dv: memref<2x4x64x32xf32>) {
  train.attention_forward %q, %q, %q into %o {causal = true}
      : memref<2x4x64x32xf32>, memref<2x4x64x32xf32>, memref<2x4x64x32xf32>
      into memref<2x4x64x32xf32>
  train.attention_backward %q, %q, %q, %o into %dq, %dk, %dv {causal = false}
      : memref<2x4x64x32xf32>, memref<2x4x64x32xf32>, memref<2x4x64x32xf32>, memref<2x4x64x32xf32>
      into memref<2x4x64x32xf32>, memref<2x4x64x32xf32>, memref<2x4x64x32xf32>
  return
}
}
