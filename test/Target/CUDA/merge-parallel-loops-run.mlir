// RUN: sinter-opt %s -sinter-cuda-merge-parallel-loops -sinter-cuda-map-to-gpu \
// RUN:     -sinter-cuda-launches-on-host \
// RUN:   | mlir-opt -arith-expand -expand-strided-metadata -lower-affine -convert-scf-to-cf \
// RUN:       -finalize-memref-to-llvm -convert-arith-to-llvm -convert-func-to-llvm \
// RUN:       -convert-cf-to-llvm -reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s

// Three copies into the interleaved columns of one buffer, merged into one
// kernel (four iterations a thread: 1024 x 1024 elements each), run on the
// CPU: every element of every column block holds its source's value.

func.func @three_columns(%q: memref<1024x1024xf32>, %k: memref<1024x1024xf32>,
                         %v: memref<1024x1024xf32>, %ws: memref<12582912xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1024 : index
  %all = memref.view %ws[%c0][] : memref<12582912xi8> to memref<1024x3072xf32>
  %sq = memref.subview %all[0, 0] [1024, 1024] [1, 1] : memref<1024x3072xf32> to memref<1024x1024xf32, strided<[3072, 1]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    %x = memref.load %q[%i, %j] : memref<1024x1024xf32>
    memref.store %x, %sq[%i, %j] : memref<1024x1024xf32, strided<[3072, 1]>>
    scf.reduce
  }
  %sk = memref.subview %all[0, 1024] [1024, 1024] [1, 1] : memref<1024x3072xf32> to memref<1024x1024xf32, strided<[3072, 1], offset: 1024>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    %x = memref.load %k[%i, %j] : memref<1024x1024xf32>
    memref.store %x, %sk[%i, %j] : memref<1024x1024xf32, strided<[3072, 1], offset: 1024>>
    scf.reduce
  }
  %sv = memref.subview %all[0, 2048] [1024, 1024] [1, 1] : memref<1024x3072xf32> to memref<1024x1024xf32, strided<[3072, 1], offset: 2048>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    %x = memref.load %v[%i, %j] : memref<1024x1024xf32>
    memref.store %x, %sv[%i, %j] : memref<1024x1024xf32, strided<[3072, 1], offset: 2048>>
    scf.reduce
  }
  return
}

func.func private @printI64(i64)
func.func private @printNewline()

// CHECK: 0
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1024 : index
  %c3072 = arith.constant 3072 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %q = memref.alloc() : memref<1024x1024xf32>
  %k = memref.alloc() : memref<1024x1024xf32>
  %v = memref.alloc() : memref<1024x1024xf32>
  %ws = memref.alloc() : memref<12582912xi8>
  %wrong = memref.alloc() : memref<1xi64>
  memref.store %zero, %wrong[%c0] : memref<1xi64>
  // q = 3 (1024 i + j), k = that + 1, v = that + 2.
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %r = arith.muli %i, %n : index
      %f = arith.addi %r, %j : index
      %t = arith.muli %f, %c3072 : index
      %fi = arith.index_cast %f : index to i64
      %three = arith.constant 3 : i64
      %b = arith.muli %fi, %three : i64
      %b1 = arith.addi %b, %one : i64
      %two = arith.constant 2 : i64
      %b2 = arith.addi %b, %two : i64
      %x0 = arith.sitofp %b : i64 to f32
      %x1 = arith.sitofp %b1 : i64 to f32
      %x2 = arith.sitofp %b2 : i64 to f32
      memref.store %x0, %q[%i, %j] : memref<1024x1024xf32>
      memref.store %x1, %k[%i, %j] : memref<1024x1024xf32>
      memref.store %x2, %v[%i, %j] : memref<1024x1024xf32>
    }
  }
  call @three_columns(%q, %k, %v, %ws) : (memref<1024x1024xf32>, memref<1024x1024xf32>, memref<1024x1024xf32>, memref<12582912xi8>) -> ()
  %all = memref.view %ws[%c0][] : memref<12582912xi8> to memref<1024x3072xf32>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %c = %c0 to %c3072 step %c1 {
      %blk = arith.divui %c, %n : index
      %j = arith.remui %c, %n : index
      %r = arith.muli %i, %n : index
      %f = arith.addi %r, %j : index
      %fi = arith.index_cast %f : index to i64
      %bi = arith.index_cast %blk : index to i64
      %three = arith.constant 3 : i64
      %b = arith.muli %fi, %three : i64
      %w = arith.addi %b, %bi : i64
      %want = arith.sitofp %w : i64 to f32
      %got = memref.load %all[%i, %c] : memref<1024x3072xf32>
      %bad = arith.cmpf une, %got, %want : f32
      %inc = arith.select %bad, %one, %zero : i64
      %old = memref.load %wrong[%c0] : memref<1xi64>
      %new = arith.addi %old, %inc : i64
      memref.store %new, %wrong[%c0] : memref<1xi64>
    }
  }
  %count = memref.load %wrong[%c0] : memref<1xi64>
  call @printI64(%count) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}
