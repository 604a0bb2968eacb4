// RUN: sinter-opt %s -sinter-cpu-register-accumulators | FileCheck %s

// A channel's sum over a nest of loops: the element is read once before the
// nest, carried through every loop, and written once after it. A plain sum
// may be reassociated (LLVM then keeps partial sums in vector lanes), and
// the loops are kept rolled so that it vectorizes the innermost.
// CHECK-LABEL: func.func @channel_sums(
// CHECK:         scf.parallel (%[[C:.*]]) =
// CHECK-NEXT:      %[[INIT:.*]] = memref.load %arg1[%[[C]]] : memref<64xf64>
// CHECK-NEXT:      %[[OUTER:.*]] = scf.for %{{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f64) {
// CHECK-NEXT:        %[[INNER:.*]] = scf.for %{{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (f64) {
// CHECK-NEXT:          %[[X:.*]] = memref.load %arg0
// CHECK-NEXT:          %[[E:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK-NEXT:          %[[S:.*]] = arith.addf %[[B]], %[[E]] fastmath<reassoc> : f64
// CHECK-NEXT:          scf.yield %[[S]] : f64
// CHECK-NEXT:        } {loop_annotation = #[[ROLLED:.*]]}
// CHECK-NEXT:        scf.yield %[[INNER]] : f64
// CHECK-NEXT:      } {loop_annotation = #[[ROLLED]]}
// CHECK-NEXT:      memref.store %[[OUTER]], %arg1[%[[C]]] : memref<64xf64>
func.func @channel_sums(%x: memref<32x64x1024xf32>, %sum: memref<64xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%c) = (%c0) to (%c64) step (%c1) {
    scf.for %n = %c0 to %c32 step %c1 {
      scf.for %i = %c0 to %c1024 step %c1 {
        %v = memref.load %x[%n, %c, %i] : memref<32x64x1024xf32>
        %e = arith.extf %v : f32 to f64
        %a = memref.load %sum[%c] : memref<64xf64>
        %s = arith.addf %a, %e : f64
        memref.store %s, %sum[%c] : memref<64xf64>
      }
    }
    scf.reduce
  }
  return
}

// A running maximum is carried too, but keeps its order-free form as it is.
// CHECK-LABEL: func.func @running_max(
// CHECK:         scf.for %{{.*}} iter_args
// CHECK:           arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:       fastmath
// CHECK:         memref.store
func.func @running_max(%x: memref<1024xf32>, %m: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  scf.for %i = %c0 to %c1024 step %c1 {
    %v = memref.load %x[%i] : memref<1024xf32>
    %a = memref.load %m[] : memref<f32>
    %s = arith.maximumf %a, %v : f32
    memref.store %s, %m[] : memref<f32>
  }
  return
}

// Left alone: a second write to the buffer in the loop, a read of the
// buffer at other indices, and indices that change inside the loop.
// CHECK-LABEL: func.func @unchanged(
// CHECK-NOT:     iter_args
// CHECK:         return
func.func @unchanged(%x: memref<1024xf32>, %s: memref<4xf32>, %t: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c1024 = arith.constant 1024 : index
  scf.for %i = %c0 to %c1024 step %c1 {
    %v = memref.load %x[%i] : memref<1024xf32>
    %a = memref.load %s[%c0] : memref<4xf32>
    %b = arith.addf %a, %v : f32
    memref.store %b, %s[%c0] : memref<4xf32>
    memref.store %b, %s[%c3] : memref<4xf32>
  }
  scf.for %i = %c0 to %c1024 step %c1 {
    %v = memref.load %s[%c3] : memref<4xf32>
    %a = memref.load %s[%c0] : memref<4xf32>
    %b = arith.addf %a, %v : f32
    memref.store %b, %s[%c0] : memref<4xf32>
  }
  scf.for %i = %c0 to %c1024 step %c1 {
    %j = arith.remui %i, %c3 : index
    %v = memref.load %x[%i] : memref<1024xf32>
    %a = memref.load %s[%j] : memref<4xf32>
    %b = arith.addf %a, %v : f32
    memref.store %b, %s[%j] : memref<4xf32>
  }
  return
}
