// RUN: sinter-opt %s -sinter-library-calls -split-input-file | FileCheck %s
// RUN: sinter-opt %s -sinter-library-calls=device=cuda -split-input-file | FileCheck %s --check-prefix=CUDA

// A batch_matmul that reads A [batch, k, m] or B [batch, n, k] in place
// (sinter-fold-matmul-transposes) calls the library with the transposed
// flags: 4 for A, 2 for B, the batch (3) and m, n, k as the product's.
// The CUDA device reads a batched A only as stored: that one stays loops.
// CHECK-LABEL: func.func @transposed_a
// CHECK:       call @sinter_cpu_matmul_f32({{.*}}, %c3_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c4_i64{{.*}})
// CHECK-NOT:   linalg.batch_matmul
// CUDA-LABEL:  func.func @transposed_a
// CUDA:        linalg.batch_matmul
// CUDA-NOT:    call @sinter_cuda_matmul
#kma = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
#kn = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#mn = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @transposed_a(%a: memref<3x4x6xf32>, %b: memref<3x4x5xf32>, %c: memref<3x6x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<3x6x5xf32>)
  linalg.batch_matmul indexing_maps = [#kma, #kn, #mn]
      ins(%a, %b : memref<3x4x6xf32>, memref<3x4x5xf32>) outs(%c : memref<3x6x5xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @transposed_b
// CHECK:       call @sinter_cpu_matmul_f32({{.*}}, %c3_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c2_i64{{.*}})
// CUDA-LABEL:  func.func @transposed_b
// CUDA:        call @sinter_cuda_matmul_f32({{.*}}, %c3_i64{{.*}}, %c6_i64, %c5_i64, %c4_i64, %c2_i64{{.*}})
#mk = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#nkb = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#mn = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @transposed_b(%a: memref<3x6x4xf32>, %b: memref<3x5x4xf32>, %c: memref<3x6x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<3x6x5xf32>)
  linalg.batch_matmul indexing_maps = [#mk, #nkb, #mn]
      ins(%a, %b : memref<3x6x4xf32>, memref<3x5x4xf32>) outs(%c : memref<3x6x5xf32>)
  return
}

// -----

// Maps that are none of the four forms (here A broadcast over the batch)
// stay loops.
// CHECK-LABEL: func.func @other_maps
// CHECK:       linalg.batch_matmul
// CHECK-NOT:   call @sinter_cpu_matmul
#shared = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#kn = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#mn = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @other_maps(%a: memref<6x4xf32>, %b: memref<3x4x5xf32>, %c: memref<3x6x5xf32>) {
  linalg.batch_matmul indexing_maps = [#shared, #kn, #mn]
      ins(%a, %b : memref<6x4xf32>, memref<3x4x5xf32>) outs(%c : memref<3x6x5xf32>)
  return
}
