// RUN: sinter-opt %s -sinter-cuda-register-accumulators -split-input-file | FileCheck %s

// A split bias gradient's partial, a thread per (chunk, column): its sum
// over the chunk's rows is read once before the nest, carried in a
// register through both loops, and written once after, with no
// reassociation (the order stays the loops') and no loop hints.
// CHECK-LABEL: func.func @partial(
// CHECK:       gpu.launch
// CHECK:         %[[INIT:.*]] = memref.load %arg1[%{{.*}}, %{{.*}}] : memref<128x768xf64>
// CHECK-NEXT:    %[[OUTER:.*]] = scf.for %{{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f64) {
// CHECK-NEXT:      %[[INNER:.*]] = scf.for %{{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (f64) {
// CHECK-NEXT:        %[[X:.*]] = memref.load %arg0
// CHECK-NEXT:        %[[E:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[B]], %[[E]] : f64
// CHECK-NEXT:        scf.yield %[[S]] : f64
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.yield %[[INNER]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %[[OUTER]], %arg1[%{{.*}}, %{{.*}}] : memref<128x768xf64>
// CHECK-NOT:   loop_annotation
func.func @partial(%x: memref<16x128x8x768xf32>, %p: memref<128x768xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c384 = arith.constant 384 : index
  %c768 = arith.constant 768 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c384, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %c256 : index
    %flat = arith.addi %base, %tx : index
    %col = arith.remui %flat, %c768 : index
    %chunk = arith.divui %flat, %c768 : index
    scf.for %b = %c0 to %c16 step %c1 {
      scf.for %j = %c0 to %c8 step %c1 {
        %v = memref.load %x[%b, %chunk, %j, %col] : memref<16x128x8x768xf32>
        %e = arith.extf %v : f32 to f64
        %a = memref.load %p[%chunk, %col] : memref<128x768xf64>
        %s = arith.addf %a, %e : f64
        memref.store %s, %p[%chunk, %col] : memref<128x768xf64>
      }
    }
    gpu.terminator
  }
  return
}

// -----

// Host loops are left alone: carrying their sum would read device memory
// on the host before the loop.
// CHECK-LABEL: func.func @host_loop(
// CHECK:       scf.for
// CHECK-NOT:     iter_args
// CHECK:         memref.load %arg1
// CHECK:         memref.store
func.func @host_loop(%x: memref<8xf32>, %sum: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %x[%i] : memref<8xf32>
    %a = memref.load %sum[] : memref<f32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %sum[] : memref<f32>
  }
  return
}

// -----

// A partial that also writes a side output at each element it visits (a
// GELU gradient for the matmuls, from inside the bias gradient's sum):
// the sum is still carried, and the side store stays in the loop, at the
// element's own indices. A buffer written twice is not carried.
// CHECK-LABEL: func.func @side_output(
// CHECK:         %[[INIT:.*]] = memref.load %arg2[%{{.*}}] : memref<256xf64>
// CHECK-NEXT:    %[[SUM:.*]] = scf.for %[[I:.*]] = {{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f64) {
// CHECK:           memref.store %{{.*}}, %arg1[%[[I]], %{{.*}}] : memref<64x256xbf16>
// CHECK:           scf.yield
// CHECK:         memref.store %[[SUM]], %arg2[%{{.*}}] : memref<256xf64>
// CHECK-LABEL: func.func @written_twice(
// CHECK:         scf.for
// CHECK-NOT:       iter_args
// CHECK:           memref.load %arg1
func.func @side_output(%x: memref<64x256xf32>, %side: memref<64x256xbf16>, %p: memref<256xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    scf.for %i = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %tx] : memref<64x256xf32>
      %g = arith.mulf %v, %v : f32
      %r = arith.truncf %g : f32 to bf16
      memref.store %r, %side[%i, %tx] : memref<64x256xbf16>
      %e = arith.extf %g : f32 to f64
      %a = memref.load %p[%tx] : memref<256xf64>
      %s = arith.addf %a, %e : f64
      memref.store %s, %p[%tx] : memref<256xf64>
    }
    gpu.terminator
  }
  return
}
func.func @written_twice(%x: memref<64xf32>, %p: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.for %i = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i] : memref<64xf32>
      %a = memref.load %p[%c0] : memref<1xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %p[%c0] : memref<1xf32>
      memref.store %v, %p[%c0] : memref<1xf32>
    }
    gpu.terminator
  }
  return
}
