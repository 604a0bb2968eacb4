// RUN: sinter-opt %s -sinter-cuda-unroll-sums -split-input-file | FileCheck %s

// A partial sum's thread: 16 rows, a side output written at each. Unrolled
// by 4, the body loads its four rows first, then sums them in order and
// writes the four side elements where they were.
// CHECK-LABEL: func.func @partial(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (f64) {
// CHECK-NEXT:      %[[X0:.*]] = memref.load %arg0[%[[I]], %{{.*}}]
// CHECK-NOT:       arith.mulf
// CHECK:           memref.load %arg0[%[[I1:.*]], %{{.*}}]
// CHECK-NOT:       arith.mulf
// CHECK:           memref.load %arg0[%[[I2:.*]], %{{.*}}]
// CHECK-NOT:       arith.mulf
// CHECK:           memref.load %arg0[%[[I3:.*]], %{{.*}}]
// CHECK-NEXT:      arith.mulf %[[X0]], %[[X0]]
// CHECK:           memref.store %{{.*}}, %arg1[%[[I]], %{{.*}}]
// CHECK:           %[[S0:.*]] = arith.addf %[[A]], %{{.*}} : f64
// CHECK:           memref.store %{{.*}}, %arg1[%[[I1]], %{{.*}}]
// CHECK:           %[[S1:.*]] = arith.addf %[[S0]], %{{.*}} : f64
// CHECK:           memref.store %{{.*}}, %arg1[%[[I2]], %{{.*}}]
// CHECK:           %[[S2:.*]] = arith.addf %[[S1]], %{{.*}} : f64
// CHECK:           memref.store %{{.*}}, %arg1[%[[I3]], %{{.*}}]
// CHECK:           %[[S3:.*]] = arith.addf %[[S2]], %{{.*}} : f64
// CHECK-NEXT:      scf.yield %[[S3]] : f64
func.func @partial(%x: memref<16x256xf32>, %side: memref<16x256xbf16>, %p: memref<256xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %init = memref.load %p[%tx] : memref<256xf64>
    %sum = scf.for %i = %c0 to %c16 step %c1 iter_args(%a = %init) -> (f64) {
      %v = memref.load %x[%i, %tx] : memref<16x256xf32>
      %g = arith.mulf %v, %v : f32
      %r = arith.truncf %g : f32 to bf16
      memref.store %r, %side[%i, %tx] : memref<16x256xbf16>
      %e = arith.extf %g : f32 to f64
      %s = arith.addf %a, %e : f64
      scf.yield %s : f64
    }
    memref.store %sum, %p[%tx] : memref<256xf64>
    gpu.terminator
  }
  return
}

// -----

// Left alone: 6 iterations (not a multiple of 4), a loop that carries
// nothing and stores nothing, and a loop on the host.
// CHECK-LABEL: func.func @left(
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 iter_args
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 {
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 iter_args
// CHECK-NOT:     step %c4
func.func @left(%x: memref<16xf32>, %y: memref<16xf32>, %p: memref<1xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %s6 = scf.for %i = %c0 to %c6 step %c1 iter_args(%a = %zero) -> (f32) {
      %v = memref.load %x[%i] : memref<16xf32>
      %s = arith.addf %a, %v : f32
      scf.yield %s : f32
    }
    memref.store %s6, %p[%c0] : memref<1xf32>
    scf.for %i = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i] : memref<16xf32>
      gpu.printf "%f", %v : f32
    }
    gpu.terminator
  }
  %host = scf.for %i = %c0 to %c16 step %c1 iter_args(%a = %zero) -> (f32) {
    %v = memref.load %x[%i] : memref<16xf32>
    %s = arith.addf %a, %v : f32
    scf.yield %s : f32
  }
  return %host : f32
}

// -----

// A block's threads striding over a row of 4,000 from their own offsets:
// unrolled by 4 with its loads first, and a remainder loop for the last
// iterations of each thread.
// CHECK-LABEL: func.func @strided(
// CHECK:         %[[MAIN:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK-NEXT:      memref.load %arg0
// CHECK-COUNT-3:   memref.load %arg0
// CHECK:           arith.addf
// CHECK:         scf.for %{{.*}} = %{{.*}} to %c4000 step %c256 iter_args(%{{.*}} = %[[MAIN]]) -> (f32) {
// CHECK-NEXT:      memref.load %arg0
func.func @strided(%x: memref<4000xf32>, %out: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %c4000 = arith.constant 4000 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %sum = scf.for %i = %tx to %c4000 step %c256 iter_args(%a = %zero) -> (f32) {
      %v = memref.load %x[%i] : memref<4000xf32>
      %s = arith.addf %a, %v : f32
      scf.yield %s : f32
    }
    memref.store %sum, %out[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// A walk over a row that stores each element (a layer norm's normalization
// after its statistics): unrolled by 4, and the loads of the row it reads
// go first, since the buffer it stores to is one the function writes (its
// bytes its own).
// CHECK-LABEL: func.func @row_again(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c4 {
// CHECK-NEXT:      memref.load %arg0[%[[I]]]
// CHECK:           memref.load %arg0
// CHECK:           memref.load %arg0
// CHECK:           memref.load %arg0
// CHECK:           arith.mulf
// CHECK:           memref.store %{{.*}}, %arg1[%[[I]]]
func.func @row_again(%x: memref<16xf32>, %y: memref<16xf32>, %scale: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.for %i = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i] : memref<16xf32>
      %w = arith.mulf %v, %scale : f32
      memref.store %w, %y[%i] : memref<16xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// The same walk where what it reads and what it stores are views of one
// buffer that meet: unrolled, but each iteration's load stays after the
// store before it, which may have written its element.
// CHECK-LABEL: func.func @views_that_meet(
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4 {
// CHECK:           memref.load
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      memref.store
// CHECK:           memref.load
func.func @views_that_meet(%scale: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %buffer = memref.alloc() : memref<24xf32>
  %x = memref.subview %buffer[0] [16] [1] : memref<24xf32> to memref<16xf32, strided<[1]>>
  %y = memref.subview %buffer[8] [16] [1] : memref<24xf32> to memref<16xf32, strided<[1], offset: 8>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    scf.for %i = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i] : memref<16xf32, strided<[1]>>
      %w = arith.mulf %v, %scale : f32
      memref.store %w, %y[%i] : memref<16xf32, strided<[1], offset: 8>>
    }
    gpu.terminator
  }
  return
}

// -----

// An embedding gradient's scatter-add: a thread walks every id, and adds
// the rows whose id is its own. Unrolled by 4, the four ids' loads go
// first; the conditional read-modify-writes stay in order (two ids alike
// add in turn).
// CHECK-LABEL: func.func @scatter_rows(
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %c4{{.*}} {
// CHECK-NEXT:      memref.load %arg0[%[[I]]]
// CHECK:           memref.load %arg0
// CHECK:           memref.load %arg0
// CHECK:           memref.load %arg0
// CHECK:           scf.if
// CHECK:             memref.store
// CHECK:           scf.if
// CHECK:           scf.if
// CHECK:           scf.if
func.func @scatter_rows(%ids: memref<16xindex>, %rows: memref<16x4xf32>, %grad: memref<8x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    scf.for %i = %c0 to %c16 step %c1 {
      %id = memref.load %ids[%i] : memref<16xindex>
      %group = arith.remui %id, %c2 : index
      %mine = arith.cmpi eq, %group, %bx : index
      scf.if %mine {
        %r = memref.load %rows[%i, %tx] : memref<16x4xf32>
        %g = memref.load %grad[%id, %tx] : memref<8x4xf32>
        %s = arith.addf %g, %r : f32
        memref.store %s, %grad[%id, %tx] : memref<8x4xf32>
      }
    }
    gpu.terminator
  }
  return
}
