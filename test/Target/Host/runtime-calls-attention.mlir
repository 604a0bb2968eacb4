// RUN: sinter-opt %s -sinter-runtime-calls | FileCheck %s

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
