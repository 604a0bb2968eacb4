// RUN: sinter-opt %s -sinter-interruptible-micro-batches | FileCheck %s

// Each micro-batch's body runs only when the runtime says so; a skipped one
// passes its carried values on unchanged. A loop that loads nothing (the
// update's) is left alone.

// CHECK-LABEL: func.func @step(
// CHECK:       %[[R:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK-NEXT:    %[[M:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK-NEXT:    %[[GO:.*]] = func.call @sinter_rt_micro_batch_begin(%[[M]]) : (i64) -> i64
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-NEXT:    %[[GOON:.*]] = arith.cmpi ne, %[[GO]], %[[ZERO]] : i64
// CHECK-NEXT:    %[[NEXT:.*]] = scf.if %[[GOON]] -> (f32) {
// CHECK-NEXT:      arith.index_cast
// CHECK-NEXT:      func.call @sinter_rt_load_input(
// CHECK-NEXT:      memref.load
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[ACC]]
// CHECK-NEXT:      scf.yield %[[SUM]] : f32
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[ACC]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.yield %[[NEXT]] : f32
// CHECK-NEXT:  }
// The last micro-batch, after the loop, is announced once, before its first
// load, and runs whatever the answer.
// CHECK:       %[[LAST:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK-NEXT:  call @sinter_rt_micro_batch_begin(%[[LAST]]) : (i64) -> i64
// CHECK-NEXT:  call @sinter_rt_load_input(%{{.*}}, %[[LAST]])
// CHECK-NEXT:  call @sinter_rt_load_input(%{{.*}}, %[[LAST]])
// CHECK:       scf.for
// CHECK-NOT:     sinter_rt_micro_batch_begin
// CHECK:       return
func.func private @sinter_rt_load_input(!llvm.ptr, i64)
func.func @step(%x: memref<f32>, %p: !llvm.ptr, %k: index, %out: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %zero) -> (f32) {
    %m = arith.index_cast %i : index to i64
    func.call @sinter_rt_load_input(%p, %m) : (!llvm.ptr, i64) -> ()
    %v = memref.load %x[] : memref<f32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  %last = arith.subi %k, %c1 : index
  %l = arith.index_cast %last : index to i64
  func.call @sinter_rt_load_input(%p, %l) : (!llvm.ptr, i64) -> ()
  func.call @sinter_rt_load_input(%p, %l) : (!llvm.ptr, i64) -> ()
  scf.for %j = %c0 to %c4 step %c1 {
    memref.store %sum, %out[%j] : memref<4xf32>
  }
  return %sum : f32
}
