// RUN: sinter-opt %s -sinter-cpu-outline-loops | FileCheck %s

// Each outermost loop nest becomes a call of a private function that holds
// it. Buffers are arguments, so that the same loop over another layer's
// buffers calls the same function; views and constants are cloned inside.
// A scalar computed at run time (a gradient norm, say) is an argument: the
// arithmetic that computes it stays in the step, once, and the functions
// are marked noinline so the step does not grow back into one function.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: memref<8xf32>, %[[B:[a-z0-9]+]]: memref<8xf32>,
// CHECK-SAME:    %[[C:[a-z0-9]+]]: memref<8xf32>, %[[D:[a-z0-9]+]]: memref<8xf32>,
// CHECK-SAME:    %[[M:[a-z0-9]+]]: memref<4x8xf32>)
// Two equal loops over different buffers share one function.
// CHECK:       call @step_loop(%[[A]], %[[B]])
// CHECK-NEXT:  call @step_loop(%[[C]], %[[D]])
// A loop over a view of a buffer: the view is cloned into the function.
// CHECK:       call @step_loop_0(%[[M]], %[[B]])
// A sequential loop with a result returns it.
// CHECK-NEXT:  %[[SUM:.*]] = call @step_loop_1(%[[A]])
// CHECK-NEXT:  %[[SQUARE:.*]] = arith.mulf %[[SUM]], %[[SUM]] : f32
// CHECK-NEXT:  call @step_loop_2(%[[A]], %[[SQUARE]], %[[D]])
// A loop around a call stays, and its inner loops are outlined.
// CHECK:       scf.for
// CHECK-NEXT:    func.call @work(%[[A]])
// CHECK-NEXT:    func.call @step_loop(%[[A]], %[[C]])
// CHECK:       return %[[SUM]]
// CHECK-NOT:   scf.parallel

// CHECK-LABEL: func.func private @step_loop(
// CHECK-SAME:  %[[X:.*]]: memref<8xf32>, %[[Y:.*]]: memref<8xf32>)
// CHECK-SAME:  attributes {passthrough = ["noinline"]}
// CHECK:        scf.parallel
// CHECK:          memref.load %[[X]]
// CHECK:          memref.store {{.*}}, %[[Y]]
// CHECK-LABEL: func.func private @step_loop_0(
// CHECK-SAME:  %[[X:.*]]: memref<4x8xf32>, %[[Y:.*]]: memref<8xf32>)
// CHECK:        memref.subview %[[X]][1, 0] [1, 8] [1, 1]
// CHECK:        scf.parallel
// CHECK-LABEL: func.func private @step_loop_1(
// CHECK-SAME:  %[[X:.*]]: memref<8xf32>) -> f32
// CHECK:        %[[R:.*]] = scf.for
// CHECK:        return %[[R]] : f32
// CHECK-LABEL: func.func private @step_loop_2(
// CHECK-SAME:  %[[X:.*]]: memref<8xf32>, %[[S:.*]]: f32, %[[Y:.*]]: memref<8xf32>)
// CHECK-NOT:    arith.mulf {{.*}}, {{.*}} : f32
// CHECK:        scf.parallel
// CHECK:          %[[V:.*]] = memref.load %[[X]]
// CHECK-NEXT:     arith.mulf %[[V]], %[[S]] : f32

func.func private @work(memref<8xf32>)

func.func @step(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>,
                %d: memref<8xf32>, %m: memref<4x8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%i] : memref<8xf32>
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %c[%i] : memref<8xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %d[%i] : memref<8xf32>
  }
  %row = memref.subview %m[1, 0] [1, 8] [1, 1]
      : memref<4x8xf32> to memref<8xf32, strided<[1], offset: 8>>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %row[%i] : memref<8xf32, strided<[1], offset: 8>>
    memref.store %x, %b[%i] : memref<8xf32>
  }
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<8xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  %square = arith.mulf %sum, %sum : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<8xf32>
    %y = arith.mulf %x, %square : f32
    memref.store %y, %d[%i] : memref<8xf32>
  }
  scf.for %k = %c0 to %c8 step %c1 {
    func.call @work(%a) : (memref<8xf32>) -> ()
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %x = memref.load %a[%i] : memref<8xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %c[%i] : memref<8xf32>
    }
  }
  return %sum : f32
}
