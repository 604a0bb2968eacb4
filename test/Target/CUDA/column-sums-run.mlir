// RUN: sinter-opt %s -sinter-cuda-split-column-reductions \
// RUN:   | mlir-opt -one-shot-bufferize="bufferize-function-boundaries" \
// RUN:       -convert-linalg-to-parallel-loops -lower-affine -canonicalize \
// RUN:   | sinter-opt -sinter-cuda-map-to-gpu -sinter-cuda-register-accumulators \
// RUN:       -sinter-cuda-unroll-sums -canonicalize | FileCheck %s --check-prefix=GPU
// RUN: sinter-opt %s -sinter-cuda-split-column-reductions \
// RUN:   | mlir-opt -one-shot-bufferize="bufferize-function-boundaries" \
// RUN:       -convert-linalg-to-parallel-loops -lower-affine -canonicalize \
// RUN:   | sinter-opt -sinter-cuda-map-to-gpu -sinter-cuda-register-accumulators \
// RUN:       -sinter-cuda-unroll-sums -sinter-cuda-launches-on-host \
// RUN:   | mlir-opt -arith-expand -expand-strided-metadata -lower-affine -convert-scf-to-cf \
// RUN:       -finalize-memref-to-llvm -convert-arith-to-llvm -convert-func-to-llvm \
// RUN:       -convert-cf-to-llvm -reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s

// A bias gradient's column sum as the CUDA target's kernels compute it: cut
// into partial sums over chunks of rows (a thread per chunk and column, its
// sum in a register, four rows' loads at a time), then the partials folded,
// each kernel run one thread after another here. The values are small
// integers, so every order of the sum is exact: a row summed twice or not
// at all, or a partial folded into the wrong column, shows as a wrong
// count against the sums taken row by row.

// GPU-LABEL: func.func @column_sums(
// GPU:         gpu.launch
// GPU:           scf.for {{.*}} iter_args
// GPU-COUNT-4:     memref.load
// GPU:         gpu.launch
func.func @column_sums(%x: tensor<4096x96xf32>) -> tensor<96xf64> {
  %zero = arith.constant 0.0 : f64
  %empty = tensor.empty() : tensor<96xf64>
  %init = linalg.fill ins(%zero : f64) outs(%empty : tensor<96xf64>) -> tensor<96xf64>
  %sums = linalg.generic {
      indexing_maps = [affine_map<(c, r) -> (r, c)>, affine_map<(c, r) -> (c)>],
      iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4096x96xf32>) outs(%init : tensor<96xf64>) {
  ^bb0(%v: f32, %acc: f64):
    %w = arith.extf %v : f32 to f64
    %s = arith.addf %acc, %w : f64
    linalg.yield %s : f64
  } -> tensor<96xf64>
  return %sums : tensor<96xf64>
}

func.func private @printI64(i64)
func.func private @printNewline()

// CHECK: 0
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c13 = arith.constant 13 : index
  %c6 = arith.constant 6 : i64
  %rows = arith.constant 4096 : index
  %cols = arith.constant 96 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %zerof = arith.constant 0.0 : f64
  // x[r, c] = (7 r + c) mod 13 - 6.
  %x = tensor.generate {
  ^bb0(%r: index, %c: index):
    %r7 = arith.muli %r, %c7 : index
    %s = arith.addi %r7, %c : index
    %m = arith.remui %s, %c13 : index
    %mi = arith.index_cast %m : index to i64
    %v = arith.subi %mi, %c6 : i64
    %vf = arith.sitofp %v : i64 to f32
    tensor.yield %vf : f32
  } : tensor<4096x96xf32>
  %sums = call @column_sums(%x) : (tensor<4096x96xf32>) -> tensor<96xf64>
  // Counted in memory: a loop's results would stay on the host.
  %wrong = memref.alloc() : memref<1xi64>
  memref.store %zero, %wrong[%c0] : memref<1xi64>
  scf.for %c = %c0 to %cols step %c1 {
    %want = scf.for %r = %c0 to %rows step %c1 iter_args(%s = %zerof) -> f64 {
      %v = tensor.extract %x[%r, %c] : tensor<4096x96xf32>
      %w = arith.extf %v : f32 to f64
      %t = arith.addf %s, %w : f64
      scf.yield %t : f64
    }
    %got = tensor.extract %sums[%c] : tensor<96xf64>
    %bad = arith.cmpf une, %got, %want : f64
    %inc = arith.select %bad, %one, %zero : i64
    %old = memref.load %wrong[%c0] : memref<1xi64>
    %new = arith.addi %old, %inc : i64
    memref.store %new, %wrong[%c0] : memref<1xi64>
  }
  %n = memref.load %wrong[%c0] : memref<1xi64>
  call @printI64(%n) : (i64) -> ()
  call @printNewline() : () -> ()
  memref.dealloc %wrong : memref<1xi64>
  return
}
