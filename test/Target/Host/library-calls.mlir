// RUN: sinter-opt %s -sinter-library-calls -split-input-file | FileCheck %s
// RUN: sinter-opt %s -sinter-library-calls=device=cuda -split-input-file | FileCheck %s --check-prefix=CUDA

// On CUDA the same matmuls and convolutions call cuBLASLt and cuDNN, through
// functions of the same arguments.
// CUDA: call @sinter_cuda_matmul_f32({{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c1_i64{{.*}})
// CUDA: call @sinter_cuda_matmul_f32({{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c9_i64, %{{.*}})
// CUDA: call @sinter_cuda_conv2d_f32(
// CUDA: call @sinter_cuda_matmul_bf16(
// CUDA: call @sinter_cuda_matmul_bf16_rounded({{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c17_i64, %{{.*}})
// CUDA: call @sinter_cuda_matmul_f32({{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c5_i64{{.*}})
// CUDA: call @sinter_cuda_matmul_f32({{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c17_i64{{.*}})
// CUDA-NOT: sinter_cpu_

// f32 matmuls on dense buffers become calls of the runtime's library, with
// the buffers' aligned pointers and the sizes; a weight shared by the batch
// is flagged. A product onto a buffer just filled with zeros writes it: the
// fill goes, no other flag is set, and the bias pointer is null.
// CHECK:       func.func private @sinter_cpu_matmul_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr)
// CHECK-LABEL: func.func @matmul
// CHECK-NOT:   linalg.fill
// CHECK:       %[[PA:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK:       %[[IA:.*]] = arith.index_cast %[[PA]] : index to i64
// CHECK:       %[[A:.*]] = llvm.inttoptr %[[IA]] : i64 to !llvm.ptr
// CHECK:       %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:       call @sinter_cpu_matmul_f32(%[[A]], %{{.*}}, %{{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c1_i64{{.*}}, %[[NULL]])
// CHECK-NOT:   linalg.matmul
func.func @matmul(%a: memref<6x4xf32>, %b: memref<4x5xf32>, %c: memref<6x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<6x5xf32>)
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  return
}

// -----

// linalg.matmul adds to its output: onto a buffer not just filled with
// zeros (a gradient accumulator), or after a fill of another value or of
// another buffer, the library adds into it (flag 8).
// CHECK-LABEL: func.func @matmul_accumulates
// CHECK:       call @sinter_cpu_matmul_f32({{.*}}, %c6_i64{{.*}}, %c5_i64{{.*}}, %c4_i64{{.*}}, %c9_i64{{.*}})
// CHECK:       linalg.fill ins(%{{.*}} : f32) outs(%arg3
// CHECK:       call @sinter_cpu_matmul_f32({{.*}}, %c6_i64{{.*}}, %c5_i64{{.*}}, %c4_i64{{.*}}, %c9_i64{{.*}})
// CHECK:       linalg.fill ins(%{{.*}} : f32) outs(%arg2
// CHECK:       call @sinter_cpu_matmul_f32({{.*}}, %c6_i64{{.*}}, %c5_i64{{.*}}, %c4_i64{{.*}}, %c9_i64{{.*}})
func.func @matmul_accumulates(%a: memref<6x4xf32>, %b: memref<4x5xf32>, %c: memref<6x5xf32>,
                              %other: memref<6x5xf32>) {
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  linalg.fill ins(%zero : f32) outs(%other : memref<6x5xf32>)
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  linalg.fill ins(%one : f32) outs(%c : memref<6x5xf32>)
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  return
}

// -----

// The zeros are read before the product: the fill stays, and the library
// adds into them.
// CHECK-LABEL: func.func @zeros_read_first
// CHECK:       linalg.fill
// CHECK:       memref.copy
// CHECK:       call @sinter_cpu_matmul_f32({{.*}}, %c6_i64{{.*}}, %c5_i64{{.*}}, %c4_i64{{.*}}, %c9_i64{{.*}})
func.func @zeros_read_first(%a: memref<6x4xf32>, %b: memref<4x5xf32>, %c: memref<6x5xf32>,
                            %seen: memref<6x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<6x5xf32>)
  memref.copy %c, %seen : memref<6x5xf32> to memref<6x5xf32>
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  return
}

// -----

// f64 has no library kernel: the op stays and becomes loops.
// CHECK-LABEL: func.func @matmul_f64
// CHECK:       linalg.matmul
// CHECK-NOT:   call @
func.func @matmul_f64(%a: memref<6x4xf64>, %b: memref<4x5xf64>, %c: memref<6x5xf64>) {
  linalg.matmul ins(%a, %b : memref<6x4xf64>, memref<4x5xf64>) outs(%c : memref<6x5xf64>)
  return
}

// -----

// Convolution onto zeros: sizes, strides and dilations, and no padding
// (the named op's input is padded already); the fill goes.
// CHECK-LABEL: func.func @conv
// CHECK-NOT:   linalg.fill
// CHECK:       call @sinter_cpu_conv2d_f32({{.*}}, %c1_i64{{.*}}, %c1_i64{{.*}}, %c0_i64{{.*}}, %c0_i64{{.*}})
// CHECK-NOT:   linalg.conv_2d_nchw_fchw
func.func @conv(%x: memref<1x3x10x10xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<1x4x4x4xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
  return
}

// -----

// A convolution that adds to what its output holds has no library call: it
// stays linalg, and becomes loops.
// CHECK-LABEL: func.func @conv_accumulates
// CHECK-NOT:   call @
// CHECK:       linalg.conv_2d_nchw_fchw
func.func @conv_accumulates(%x: memref<1x3x10x10xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
  return
}

// -----

// compute: BF16: a matmul of two bf16 buffers into an f32 one calls the
// bf16 matmul, with the same arguments; one of mixed inputs stays linalg.
// CHECK:       func.func private @sinter_cpu_matmul_bf16(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr)
// CHECK-LABEL: func.func @matmul_bf16
// CHECK-NOT:   linalg.fill
// CHECK:       call @sinter_cpu_matmul_bf16(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c1_i64{{.*}})
// CHECK-NOT:   linalg.matmul
// CHECK-LABEL: func.func @matmul_mixed
// CHECK-NOT:   call @
// CHECK:       linalg.matmul
func.func @matmul_bf16(%a: memref<6x4xbf16>, %b: memref<4x5xbf16>, %c: memref<6x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<6x5xf32>)
  linalg.matmul ins(%a, %b : memref<6x4xbf16>, memref<4x5xbf16>) outs(%c : memref<6x5xf32>)
  return
}
func.func @matmul_mixed(%a: memref<6x4xbf16>, %b: memref<4x5xf32>, %c: memref<6x5xf32>) {
  linalg.matmul ins(%a, %b : memref<6x4xbf16>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  return
}

// -----

// activations: BF16: a bf16 result onto a bf16 bias's rows calls the
// rounded matmul with the bias (flag 16), on either device.
// CHECK:       func.func private @sinter_cpu_matmul_bf16_rounded(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr)
// CHECK-LABEL: func.func @matmul_bf16_rounded
// CHECK-NOT:   linalg.broadcast
// CHECK:       call @sinter_cpu_matmul_bf16_rounded(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c17_i64, %{{.*}})
// CHECK-NOT:   linalg.matmul
func.func @matmul_bf16_rounded(%a: memref<6x4xbf16>, %b: memref<4x5xbf16>, %bias: memref<5xbf16>, %c: memref<6x5xbf16>) {
  linalg.broadcast ins(%bias : memref<5xbf16>) outs(%c : memref<6x5xbf16>) dimensions = [0]
  linalg.matmul ins(%a, %b : memref<6x4xbf16>, memref<4x5xbf16>) outs(%c : memref<6x5xbf16>)
  return
}

// -----

// A weight gradient, x^T @ dy, reads x ([k, m]) transposed in place (flag
// 4), on either device.
// CHECK-LABEL: func.func @matmul_transposed_a
// CHECK:       call @sinter_cpu_matmul_f32({{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c5_i64{{.*}})
// CHECK-NOT:   linalg.matmul
#km = affine_map<(d0, d1, d2) -> (d2, d0)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @matmul_transposed_a(%a: memref<4x6xf32>, %b: memref<4x5xf32>, %c: memref<6x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<6x5xf32>)
  linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%a, %b : memref<4x6xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  return
}

// -----

// A product onto a bias broadcast over its rows just before it
// (sinter-matmul-bias): the broadcast goes, and the library adds the bias
// (flag 16, with the bias's pointer) instead of adding into C.
// CHECK-LABEL: func.func @matmul_bias
// CHECK-NOT:   linalg.broadcast
// CHECK:       %[[PB:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK:       %[[IB:.*]] = arith.index_cast %[[PB]] : index to i64
// CHECK:       %[[BIAS:.*]] = llvm.inttoptr %[[IB]] : i64 to !llvm.ptr
// CHECK:       call @sinter_cpu_matmul_f32({{.*}}, %c1_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c17_i64{{.*}}, %[[BIAS]])
// CHECK-NOT:   linalg.matmul
func.func @matmul_bias(%a: memref<6x4xf32>, %b: memref<4x5xf32>, %c: memref<6x5xf32>,
                       %bias: memref<5xf32>) {
  linalg.broadcast ins(%bias : memref<5xf32>) outs(%c : memref<6x5xf32>) dimensions = [0]
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  return
}

// -----

// The rows are read before the product, or the broadcast is along the
// other dimension: it stays, and the library adds into what it wrote.
// CHECK-LABEL: func.func @bias_read_first
// CHECK:       linalg.broadcast
// CHECK:       memref.copy
// CHECK:       call @sinter_cpu_matmul_f32({{.*}}, %c4_i64{{.*}}, %c9_i64{{[_0-9]*}}, %{{.*}})
// CHECK:       linalg.broadcast
// CHECK:       call @sinter_cpu_matmul_f32({{.*}}, %c4_i64{{.*}}, %c9_i64{{[_0-9]*}}, %{{.*}})
func.func @bias_read_first(%a: memref<6x4xf32>, %b: memref<4x5xf32>, %c: memref<6x5xf32>,
                           %bias: memref<5xf32>, %seen: memref<6x5xf32>,
                           %column: memref<6xf32>) {
  linalg.broadcast ins(%bias : memref<5xf32>) outs(%c : memref<6x5xf32>) dimensions = [0]
  memref.copy %c, %seen : memref<6x5xf32> to memref<6x5xf32>
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  linalg.broadcast ins(%column : memref<6xf32>) outs(%c : memref<6x5xf32>) dimensions = [1]
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  return
}

// -----

// Rows padded past their length (sinter-cuda-pitch-matmul-rows): on CUDA
// the call that takes each operand's row pitch, here a's 8 and c's 8 (and
// b's dense 5, stored [n, k]); the CPU's library takes dense buffers only,
// so there the product stays loops.
// CUDA-LABEL: func.func @pitched
// CUDA:       call @sinter_cuda_matmul_pitched_bf16({{.*}}, %c6_i64, %c4_i64, %c5_i64, %c3_i64, %{{.*}}, %c8_i64, %c5_i64{{.*}}, %c8_i64{{.*}})
// CUDA-NOT:   linalg.matmul
// CHECK-LABEL: func.func @pitched
// CHECK:       linalg.matmul
func.func @pitched(%wa: memref<6x8xbf16>, %b: memref<4x5xbf16>, %wc: memref<6x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.subview %wa[0, 0] [6, 5] [1, 1] : memref<6x8xbf16> to memref<6x5xbf16, strided<[8, 1]>>
  %c = memref.subview %wc[0, 0] [6, 4] [1, 1] : memref<6x8xf32> to memref<6x4xf32, strided<[8, 1]>>
  linalg.fill ins(%zero : f32) outs(%c : memref<6x4xf32, strided<[8, 1]>>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<6x5xbf16, strided<[8, 1]>>, memref<4x5xbf16>)
      outs(%c : memref<6x4xf32, strided<[8, 1]>>)
  return
}

// -----

// Operands whose padding is their own (sinter-cuda-pitch-matmul-rows marks
// them) and that are the leading part of buffers with room past an odd
// extent run over it, rounded up to 16: the head's logits (n of 5 becomes
// 16; what the padding computes, nobody reads) and their gradient's
// product with the same rows (k of 5 becomes 16, the padding of both
// operands filled with zeros first, so that its products add nothing).
// CUDA-LABEL: func.func @padded_extents
// CUDA:       call @sinter_cuda_matmul_pitched_bf16({{.*}}, %c6_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %{{.*}}, %c8_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}})
// CUDA:       %[[PADA:.*]] = memref.subview %arg3[0, 5] [6, 11] [1, 1]
// CUDA:       linalg.fill {{.*}} outs(%[[PADA]]
// CUDA:       %[[PADB:.*]] = memref.subview %arg1[5, 0] [11, 8] [1, 1]
// CUDA:       linalg.fill {{.*}} outs(%[[PADB]]
// CUDA:       call @sinter_cuda_matmul_pitched_bf16({{.*}}, %c6_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %{{.*}}, %c16_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}})
func.func @padded_extents(%x: memref<6x8xbf16>, %wb: memref<16x8xbf16>, %wl: memref<6x16xf32>,
                          %wg: memref<6x16xbf16>, %dx: memref<6x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %w = memref.subview %wb[0, 0] [5, 8] [1, 1] : memref<16x8xbf16> to memref<5x8xbf16, strided<[8, 1]>>
  %l = memref.subview %wl[0, 0] [6, 5] [1, 1] : memref<6x16xf32> to memref<6x5xf32, strided<[16, 1]>>
  linalg.fill ins(%zero : f32) outs(%l : memref<6x5xf32, strided<[16, 1]>>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<6x8xbf16>, memref<5x8xbf16, strided<[8, 1]>>)
      outs(%l : memref<6x5xf32, strided<[16, 1]>>) {sinter.padded_operands = array<i64: 1, 2>}
  %g = memref.subview %wg[0, 0] [6, 5] [1, 1] : memref<6x16xbf16> to memref<6x5xbf16, strided<[16, 1]>>
  linalg.fill ins(%zero : f32) outs(%dx : memref<6x8xf32>)
  linalg.matmul ins(%g, %w : memref<6x5xbf16, strided<[16, 1]>>, memref<5x8xbf16, strided<[8, 1]>>)
      outs(%dx : memref<6x8xf32>) {sinter.padded_operands = array<i64: 0, 1>}
  return
}

// -----

// Slices of an input are not padding: the first product of a split matmul
// keeps its k of 100 (no fill writes the input's other columns), and the
// second, whose slice starts 400 bytes in (the plan promises cuBLASLt 64),
// stays loops.
// CUDA-LABEL: func.func @slices_of_inputs
// CUDA-NOT:   linalg.fill
// CUDA:       call @sinter_cuda_matmul_pitched_f32({{.*}}, %c8_i64{{[_0-9]*}}, %c32_i64{{[_0-9]*}}, %c100_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %{{.*}}, %c200_i64{{[_0-9]*}}, %c32_i64{{[_0-9]*}}, %c32_i64{{[_0-9]*}})
// CUDA:       linalg.matmul
func.func @slices_of_inputs(%x: memref<8x200xf32>, %w: memref<200x32xf32>, %c: memref<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %x1 = memref.subview %x[0, 0] [8, 100] [1, 1] : memref<8x200xf32> to memref<8x100xf32, strided<[200, 1]>>
  %x2 = memref.subview %x[0, 100] [8, 100] [1, 1] : memref<8x200xf32> to memref<8x100xf32, strided<[200, 1], offset: 100>>
  %w1 = memref.subview %w[0, 0] [100, 32] [1, 1] : memref<200x32xf32> to memref<100x32xf32, strided<[32, 1]>>
  %w2 = memref.subview %w[100, 0] [100, 32] [1, 1] : memref<200x32xf32> to memref<100x32xf32, strided<[32, 1], offset: 3200>>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x32xf32>)
  linalg.matmul ins(%x1, %w1 : memref<8x100xf32, strided<[200, 1]>>, memref<100x32xf32, strided<[32, 1]>>)
      outs(%c : memref<8x32xf32>)
  linalg.matmul ins(%x2, %w2 : memref<8x100xf32, strided<[200, 1], offset: 100>>, memref<100x32xf32, strided<[32, 1], offset: 3200>>)
      outs(%c : memref<8x32xf32>)
  return
}
