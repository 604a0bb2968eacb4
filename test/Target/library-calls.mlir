// RUN: sinter-opt %s -sinter-library-calls -split-input-file | FileCheck %s
// RUN: sinter-opt %s -sinter-library-calls=device=cuda -split-input-file | FileCheck %s --check-prefix=CUDA

// On CUDA the same matmuls and convolutions call cuBLASLt and cuDNN, through
// functions of the same arguments.
// CUDA: call @sinter_cuda_matmul_f32({{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c1_i64{{.*}})
// CUDA: call @sinter_cuda_conv2d_f32(
// CUDA-NOT: sinter_cpu_

// f32 matmuls on dense buffers become calls of the runtime's library, with
// the buffers' aligned pointers and the sizes; a weight shared by the batch
// is flagged.
// CHECK:       func.func private @sinter_cpu_matmul_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @matmul
// CHECK:       %[[PA:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK:       %[[IA:.*]] = arith.index_cast %[[PA]] : index to i64
// CHECK:       %[[A:.*]] = llvm.inttoptr %[[IA]] : i64 to !llvm.ptr
// CHECK:       call @sinter_cpu_matmul_f32(%[[A]], %{{.*}}, %{{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c1_i64{{.*}})
// CHECK-NOT:   linalg.matmul
func.func @matmul(%a: memref<6x4xf32>, %b: memref<4x5xf32>, %c: memref<6x5xf32>) {
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  return
}

// -----

// f64 has no library kernel: the op stays and becomes loops.
// CHECK-LABEL: func.func @matmul_f64
// CHECK:       linalg.matmul
// CHECK-NOT:   call
func.func @matmul_f64(%a: memref<6x4xf64>, %b: memref<4x5xf64>, %c: memref<6x5xf64>) {
  linalg.matmul ins(%a, %b : memref<6x4xf64>, memref<4x5xf64>) outs(%c : memref<6x5xf64>)
  return
}

// -----

// Convolution: sizes, strides and dilations.
// CHECK-LABEL: func.func @conv
// CHECK:       call @sinter_cpu_conv2d_f32(
// CHECK-NOT:   linalg.conv_2d_nchw_fchw
func.func @conv(%x: memref<1x3x10x10xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
  return
}
