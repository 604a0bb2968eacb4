// RUN: sinter-opt %s -sinter-runtime-calls | FileCheck %s

// cuDNN's batch-norm on buffers becomes the runtime's calls: the inputs'
// and results' device pointers, then n, c, the product of the other
// dimensions, and epsilon. Before each, the step names the call's .sn op
// (an index into the module's table of library sites, for the runtime's
// messages): the forward op inside a called function says where it was
// called from.
// CHECK:       module attributes {sinter.device = "cuda", sinter.library_sites = ["std/nn.sn:62:13, called at m.sn:7:5", "{{.*}}runtime-calls-batch-norm.mlir:{{[0-9]+}}:3"]}
// CHECK-LABEL: func.func @batch_norm(
// CHECK-DAG:     %[[EPS:.*]] = arith.constant 1.000000e-05 : f64
// CHECK:         call @sinter_rt_library_site(%c0_i64)
// CHECK-NEXT:    call @sinter_cuda_batch_norm_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c8_i64, %c16_i64, %c12_i64, %[[EPS]])
// CHECK:         call @sinter_rt_library_site(%c1_i64)
// CHECK-NEXT:    call @sinter_cuda_batch_norm_backward_f32(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c8_i64{{.*}}, %c16_i64{{.*}}, %c12_i64{{.*}}, %{{.*}})
// CHECK-NOT:     train.
module attributes {sinter.device = "cuda"} {
func.func @batch_norm(%x: memref<8x16x3x4xf32>, %w: memref<16xf32>, %b: memref<16xf32>,
                      %y: memref<8x16x3x4xf32>, %mean: memref<16xf32>,
                      %invstd: memref<16xf32>, %dx: memref<8x16x3x4xf32>,
                      %dw: memref<16xf32>, %db: memref<16xf32>) {
  train.batch_norm_forward %x, %w, %b into %y, %mean, %invstd {epsilon = 1.0e-05 : f64}
      : memref<8x16x3x4xf32>, memref<16xf32>, memref<16xf32>
      into memref<8x16x3x4xf32>, memref<16xf32>, memref<16xf32>
      loc(callsite("std/nn.sn":62:13 at "m.sn":7:5))
  train.batch_norm_backward %x, %y, %w, %mean, %invstd into %dx, %dw, %db {epsilon = 1.0e-05 : f64}
      : memref<8x16x3x4xf32>, memref<8x16x3x4xf32>, memref<16xf32>, memref<16xf32>, memref<16xf32>
      into memref<8x16x3x4xf32>, memref<16xf32>, memref<16xf32>
  return
}
}
