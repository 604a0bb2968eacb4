// RUN: sinter-opt %s -sinter-library-calls=device=cuda -split-input-file | FileCheck %s
// RUN: sinter-opt %s -sinter-library-calls -split-input-file | FileCheck %s --check-prefix=CPU

// precision.matmul TF32 (sinter.tf32_matmuls on the module): CUDA's f32
// matmuls carry flag bit 5 (32): 1 + 32, the weight shared by the batch,
// and 2 + 1 + 32 with the weight read transposed. bf16 matmuls do not (their
// inputs are bf16 already), and the CPU's calls never do.
// CHECK-LABEL: func.func @tf32
// CHECK:       call @sinter_cuda_matmul_f32({{.*}}, %c33_i64{{[_0-9]*}}, %{{[0-9]+}})
// CHECK:       call @sinter_cuda_matmul_f32({{.*}}, %c35_i64{{[_0-9]*}}, %{{[0-9]+}})
// CHECK:       call @sinter_cuda_matmul_bf16({{.*}}, %c1_i64{{[_0-9]*}}, %{{[0-9]+}})
// CPU-LABEL:   func.func @tf32
// CPU:         call @sinter_cpu_matmul_f32({{.*}}, %c1_i64{{[_0-9]*}}, %{{[0-9]+}})
// CPU:         call @sinter_cpu_matmul_f32({{.*}}, %c3_i64{{[_0-9]*}}, %{{[0-9]+}})
module attributes {sinter.tf32_matmuls} {
  func.func @tf32(%a: memref<6x4xf32>, %b: memref<4x5xf32>, %bt: memref<5x4xf32>,
                  %c: memref<6x5xf32>, %a16: memref<6x4xbf16>, %b16: memref<4x5xbf16>) {
    %zero = arith.constant 0.0 : f32
    linalg.fill ins(%zero : f32) outs(%c : memref<6x5xf32>)
    linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
    linalg.fill ins(%zero : f32) outs(%c : memref<6x5xf32>)
    linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                   affine_map<(m, n, k) -> (n, k)>,
                                   affine_map<(m, n, k) -> (m, n)>]
        ins(%a, %bt : memref<6x4xf32>, memref<5x4xf32>) outs(%c : memref<6x5xf32>)
    linalg.fill ins(%zero : f32) outs(%c : memref<6x5xf32>)
    linalg.matmul ins(%a16, %b16 : memref<6x4xbf16>, memref<4x5xbf16>) outs(%c : memref<6x5xf32>)
    return
  }
}

// -----

// Without the mark, the same f32 matmul carries no TF32 flag.
// CHECK-LABEL: func.func @highest
// CHECK:       call @sinter_cuda_matmul_f32({{.*}}, %c1_i64{{[_0-9]*}}, %{{[0-9]+}})
func.func @highest(%a: memref<6x4xf32>, %b: memref<4x5xf32>, %c: memref<6x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<6x5xf32>)
  linalg.matmul ins(%a, %b : memref<6x4xf32>, memref<4x5xf32>) outs(%c : memref<6x5xf32>)
  return
}
