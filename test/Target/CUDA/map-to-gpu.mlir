// RUN: sinter-opt %s -sinter-cuda-map-to-gpu -canonicalize -sinter-cuda-bare-kernel-arguments -split-input-file | FileCheck %s

// A parallel loop nest becomes one thread per iteration, laid out flat over
// blocks of 256 threads: each thread checks its index against the trip
// count (24 here, which 256 does not divide) and delinearizes it, the
// innermost dimension fastest. A sequential loop over memory runs on one
// thread; so does a store, with the scalar loads and arithmetic it needs,
// which would otherwise wait on the host for the device.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: memref<4x6xf32>, %[[OUT:[a-z0-9]+]]: memref<4x6xf32>, %[[S:[a-z0-9]+]]: memref<f32>, %[[ACC:[a-z0-9]+]]: memref<f64>)
// CHECK-DAG:   %[[C256:.*]] = arith.constant 256 : index
// CHECK-DAG:   %[[C24:.*]] = arith.constant 24 : index
// CHECK-DAG:   %[[C6:.*]] = arith.constant 6 : index
// CHECK:       gpu.launch blocks({{.*}}) in ({{.*}} = %c1{{.*}}) threads(%[[TID:[a-z0-9]+]], {{.*}}) in ({{.*}} = %[[C256]]
// CHECK:         %[[IN:.*]] = arith.cmpi ult, %[[TID]], %[[C24]]
// CHECK:         scf.if %[[IN]] {
// CHECK:           %[[J:.*]] = arith.remui %[[TID]], %[[C6]]
// CHECK:           %[[R:.*]] = arith.divui %[[TID]], %[[C6]]
// CHECK:           %[[I:.*]] = arith.remui %[[R]]
// CHECK:           memref.load %[[A]][%[[I]], %[[J]]]
// CHECK:           memref.store {{.*}}, %[[OUT]][%[[I]], %[[J]]]
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-NEXT:    scf.for
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-NEXT:    %[[V:.*]] = memref.load %[[S]][]
// CHECK-NEXT:    %[[W:.*]] = arith.extf %[[V]]
// CHECK-NEXT:    %[[T:.*]] = memref.load %[[ACC]][]
// CHECK-NEXT:    %[[U:.*]] = arith.addf %[[T]], %[[W]]
// CHECK-NEXT:    memref.store %[[U]], %[[ACC]][]
// CHECK-NOT:   memref.load
// CHECK:       return
func.func @step(%a: memref<4x6xf32>, %out: memref<4x6xf32>, %s: memref<f32>, %acc: memref<f64>) attributes {sinter.phase = "train"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c6) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x6xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %out[%i, %j] : memref<4x6xf32>
    scf.reduce
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i, %c0] : memref<4x6xf32>
    %o = memref.load %s[] : memref<f32>
    %y = arith.addf %x, %o : f32
    memref.store %y, %s[] : memref<f32>
  }
  %v = memref.load %s[] : memref<f32>
  %w = arith.extf %v : f32 to f64
  %t = memref.load %acc[] : memref<f64>
  %u = arith.addf %t, %w : f64
  memref.store %u, %acc[] : memref<f64>
  return
}

// -----

// A loop around calls (the micro-batch loop) stays on the host, and the
// loops inside it become kernels.
// CHECK-LABEL: func.func @micro_batches(
// CHECK:       scf.for
// CHECK:         call @sinter_rt_load_input
// CHECK:         gpu.launch
// CHECK:       }
func.func private @sinter_rt_load_input(!llvm.ptr, i64)
func.func @micro_batches(%x: memref<8xf32>, %p: !llvm.ptr, %k: index) attributes {sinter.phase = "train"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %i0 = arith.constant 0 : i64
  scf.for %m = %c0 to %k step %c1 {
    func.call @sinter_rt_load_input(%p, %i0) : (!llvm.ptr, i64) -> ()
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %x[%i] : memref<8xf32>
      %w = arith.mulf %v, %v : f32
      memref.store %w, %x[%i] : memref<8xf32>
      scf.reduce
    }
  }
  return
}

// -----

// Kernels take buffers as bare pointers: a strided slice crosses as its
// allocation's base and is rebuilt inside the kernel.
// CHECK-LABEL: func.func @slice(
// CHECK:       %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %{{.*}} : memref<4x2xf32, strided<[8, 1], offset: 2>>
// CHECK:       gpu.launch
// CHECK:         %[[VIEW:.*]] = memref.reinterpret_cast %[[BASE]] to offset: [2], sizes: [4, 2], strides: [8, 1]
// CHECK:         memref.load %[[VIEW]]
func.func @slice(%a: memref<4x8xf32>, %out: memref<4x2xf32>) attributes {sinter.phase = "eval"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %s = memref.subview %a[0, 2] [4, 2] [1, 1] : memref<4x8xf32> to memref<4x2xf32, strided<[8, 1], offset: 2>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c2) step (%c1, %c1) {
    %v = memref.load %s[%i, %j] : memref<4x2xf32, strided<[8, 1], offset: 2>>
    memref.store %v, %out[%i, %j] : memref<4x2xf32>
    scf.reduce
  }
  return
}
