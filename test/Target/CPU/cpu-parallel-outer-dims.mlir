// RUN: sinter-opt %s -sinter-cpu-parallel-outer-dims | FileCheck %s
// RUN: sinter-opt %s -sinter-cpu-parallel-outer-dims=min-parallel-iterations=4096 | FileCheck %s --check-prefix=MORE
// RUN: sinter-opt %s -sinter-cpu-parallel-outer-dims=min-parallel-work=1 | FileCheck %s --check-prefix=ALL

// Threads share the fewest leading dimensions with 64 iterations or more
// (32 x 64 here); the rest become sequential loops that LLVM is asked not
// to unroll, so it vectorizes the innermost along memory.
// CHECK-LABEL: func.func @elementwise(
// CHECK:         scf.parallel (%[[N:.*]], %[[C:.*]]) = (%c0, %c0) to (%c32, %c64) step (%c1, %c1) {
// CHECK-NEXT:      scf.for %[[H:.*]] = %c0 to %c32 step %c1 {
// CHECK-NEXT:        scf.for %[[W:.*]] = %c0 to %c32 step %c1 {
// CHECK-NEXT:          %[[X:.*]] = memref.load %arg0[%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:          %[[Y:.*]] = arith.addf %[[X]], %[[X]]
// CHECK-NEXT:          memref.store %[[Y]], %arg1[%[[N]], %[[C]], %[[H]], %[[W]]]
// CHECK-NEXT:        } {loop_annotation = #[[ROLLED:.*]]}
// CHECK-NEXT:      } {loop_annotation = #[[ROLLED]]}
// CHECK-NEXT:      scf.reduce
// With 4096 asked for, three dimensions stay parallel (32 x 64 x 32).
// MORE-LABEL: func.func @elementwise(
// MORE:         scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%c0, %c0, %c0) to (%c32, %c64, %c32)
// MORE-NEXT:      scf.for %{{.*}} = %c0 to %c32 step %c1 {
// MORE-NOT:       scf.for
// MORE-LABEL: func.func @rows(
func.func @elementwise(%x: memref<32x64x32x32xf32>, %y: memref<32x64x32x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%n, %c, %h, %w) = (%c0, %c0, %c0, %c0) to (%c32, %c64, %c32, %c32)
      step (%c1, %c1, %c1, %c1) {
    %v = memref.load %x[%n, %c, %h, %w] : memref<32x64x32x32xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %y[%n, %c, %h, %w] : memref<32x64x32x32xf32>
    scf.reduce
  }
  return
}

// A first dimension of 256 is enough on its own.
// CHECK-LABEL: func.func @rows(
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c256) step (%c1) {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %c1024 step %c1 {
func.func @rows(%x: memref<256x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c1024) step (%c1, %c1) {
    memref.store %one, %x[%i, %j] : memref<256x1024xf32>
    scf.reduce
  }
  return
}

// Left as they are: a bound known only at run time, a loop that reduces
// across its dimensions, and (where every nest may have threads) one whose
// dimensions never reach 64 together.
// A loop inside another parallel one runs inside a thread: its dimensions
// become sequential loops (a partial row's loop in a column reduction).
// CHECK-LABEL: func.func @unchanged(
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%[[D:.*]], %c1024)
// CHECK-NOT:       scf.for
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c256, %c1024) {{.*}} init
// CHECK-NOT:       scf.for
// ALL-LABEL:     func.func @unchanged(
// ALL:           scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c4, %c4)
// ALL-NEXT:        memref.store
// CHECK:         scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK-NEXT:        memref.store
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c256)
// CHECK-NEXT:      scf.for %[[J:.*]] = %c0 to %c256 step %c1 {
// CHECK-NEXT:        scf.for %[[K:.*]] = %c0 to %c4 step %c1 {
// CHECK-NEXT:          scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK-NEXT:            memref.store %{{.*}}, %{{.*}}[%[[J]], %[[K]]]
// CHECK-NOT:       scf.parallel
func.func @unchanged(%x: memref<?x1024xf32>, %d: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %c1024 = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%d, %c1024) step (%c1, %c1) {
    memref.store %zero, %x[%i, %j] : memref<?x1024xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c1024) step (%c1, %c1) init (%zero) -> f32 {
    %v = memref.load %x[%i, %j] : memref<?x1024xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    memref.store %zero, %x[%i, %j] : memref<?x1024xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
    scf.parallel (%j, %k, %l) = (%c0, %c0, %c0) to (%c256, %c4, %c4) step (%c1, %c1, %c1) {
      memref.store %zero, %x[%j, %k] : memref<?x1024xf32>
      scf.reduce
    }
    scf.reduce
  }
  return %sum : f32
}

// A nest of fewer than 16,384 iterations in all runs on the calling thread:
// a per-channel map (64), and the last sum of a split column reduction's
// partial rows (64 columns of 32 rows). With 128 x 256 (32,768) the
// threads share it.
// CHECK-LABEL: func.func @small(
// CHECK-NOT:     scf.parallel
// CHECK:         scf.for %[[C:.*]] = %c0 to %c64 step %c1 {
// CHECK-NEXT:      memref.store %{{.*}}, %arg1[%[[C]]]
// CHECK:         scf.for %[[C2:.*]] = %c0 to %c64 step %c1 {
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %c32 step %c1 {
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c128)
// CHECK-NEXT:      scf.for %{{.*}} = %c0 to %c256 step %c1 {
func.func @small(%rows: memref<32x64xf64>, %sum: memref<64xf64>, %big: memref<128x256xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f64
  scf.parallel (%c) = (%c0) to (%c64) step (%c1) {
    memref.store %zero, %sum[%c] : memref<64xf64>
    scf.reduce
  }
  scf.parallel (%c) = (%c0) to (%c64) step (%c1) {
    scf.for %r = %c0 to %c32 step %c1 {
      %v = memref.load %rows[%r, %c] : memref<32x64xf64>
      %s = memref.load %sum[%c] : memref<64xf64>
      %t = arith.addf %s, %v : f64
      memref.store %t, %sum[%c] : memref<64xf64>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c128) step (%c1) {
    scf.for %j = %c0 to %c256 step %c1 {
      memref.store %zero, %big[%i, %j] : memref<128x256xf64>
    }
    scf.reduce
  }
  return
}

// The work of a nest counts the loops inside it: 16 iterations around
// 32 x 32 (16,384 in all) stay parallel, and so does a nest whose inner
// bound is known only at run time.
// CHECK-LABEL: func.func @inner_loops(
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c16)
// CHECK:         scf.parallel (%{{.*}}) = (%c0) to (%c16)
func.func @inner_loops(%x: memref<16x32x32xf32>, %d: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    scf.for %j = %c0 to %c32 step %c1 {
      scf.for %k = %c0 to %c32 step %c1 {
        memref.store %zero, %x[%i, %j, %k] : memref<16x32x32xf32>
      }
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    scf.for %j = %c0 to %d step %c1 {
      memref.store %zero, %x[%i, %j, %c0] : memref<16x32x32xf32>
    }
    scf.reduce
  }
  return
}
