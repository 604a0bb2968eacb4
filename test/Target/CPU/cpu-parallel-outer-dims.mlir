// RUN: sinter-opt %s -sinter-cpu-parallel-outer-dims | FileCheck %s
// RUN: sinter-opt %s -sinter-cpu-parallel-outer-dims=min-parallel-iterations=4096 | FileCheck %s --check-prefix=MORE

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
// across its dimensions, and one whose dimensions never reach 64 together.
// A loop inside another parallel one runs inside a thread: its dimensions
// become sequential loops (a partial row's loop in a column reduction).
// CHECK-LABEL: func.func @unchanged(
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%[[D:.*]], %c1024)
// CHECK-NOT:       scf.for
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c256, %c1024) {{.*}} init
// CHECK-NOT:       scf.for
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) = (%c0, %c0) to (%c4, %c4)
// CHECK-NOT:       scf.for
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
