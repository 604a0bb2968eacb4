// RUN: sinter-opt %s -sinter-cuda-host-memory | FileCheck %s

// The host branches on a loss in device memory: the element is copied into
// a host slot by the runtime (after the queued work) and read from there.
// A host slot itself is read directly.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[LOSS:[a-z0-9]+]]: memref<4xf32>
// CHECK:       %[[SLOT:.*]] = memref.alloca() : memref<f32>
// CHECK:       %[[BASE:.*]], %[[OFF:.*]], %{{.*}}, %[[STRIDE:.*]] = memref.extract_strided_metadata %[[LOSS]]
// CHECK:       %[[ELEM:.*]] = arith.addi %[[OFF]], {{.*}}
// CHECK:       %[[BYTES:.*]] = arith.muli %[[ELEM]], %c4
// CHECK:       call @sinter_cuda_read(%{{.*}}, %{{.*}}, %{{.*}}, %c4_i64)
// CHECK:       %[[V:.*]] = memref.load %[[SLOT]][]
// CHECK:       arith.cmpf olt, %[[V]]
// CHECK:       %[[HOST:.*]] = memref.alloca() : memref<i64>
// CHECK:       memref.load %[[HOST]][]
// CHECK-NOT:   sinter_cuda_read
func.func @step(%loss: memref<4xf32>) -> i1 attributes {sinter.phase = "train"} {
  %c2 = arith.constant 2 : index
  %inf = arith.constant 0x7F800000 : f32
  %v = memref.load %loss[%c2] : memref<4xf32>
  %finite = arith.cmpf olt, %v, %inf : f32
  %h = memref.alloca() : memref<i64>
  %n = memref.load %h[] : memref<i64>
  return %finite : i1
}

// A read in a loop takes its slot from the entry block (the loop does not
// grow the stack); a constant table (a memref.global) is host memory, read
// directly.
// CHECK-LABEL: func.func @in_a_loop(
// CHECK-NEXT:    memref.alloca() : memref<f32>
// CHECK:         scf.for
// CHECK-NOT:       memref.alloca
// CHECK:           call @sinter_cuda_read
// CHECK:         %[[TABLE:.*]] = memref.get_global @table
// CHECK-NEXT:    memref.load %[[TABLE]]
memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
func.func @in_a_loop(%loss: memref<4xf32>, %k: index) -> f32 attributes {sinter.phase = "train"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %loss[%c1] : memref<4xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  %t = memref.get_global @table : memref<2xf32>
  %w = memref.load %t[%c1] : memref<2xf32>
  %r = arith.addf %sum, %w : f32
  return %r : f32
}
