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
