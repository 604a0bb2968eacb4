// RUN: sinter-opt %s -split-input-file -sinter-fold-in-place-updates -verify-diagnostics | FileCheck %s

// A result that updates argument 0 in place is that argument's buffer (here
// through a cast): it is dropped, the other results stay.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    -> (memref<f64> {sinter.grad_norm = "grad_norm"})
// CHECK:         return %{{.*}} : memref<f64>
func.func @step(%p: memref<4xf32> {sinter.param = "w"}, %n: memref<f64>)
    -> (memref<f64> {sinter.grad_norm = "grad_norm"},
        memref<4xf32, strided<[?], offset: ?>> {sinter.updates = 0 : i64}) {
  %c = memref.cast %p : memref<4xf32> to memref<4xf32, strided<[?], offset: ?>>
  return %n, %c : memref<f64>, memref<4xf32, strided<[?], offset: ?>>
}

// -----

// A copy is never taken for an update: the step would train a stale
// parameter.
// expected-error @below {{internal error: result 0 of the step updates argument 0 but is not computed in its buffer}}
func.func @copied(%p: memref<4xf32> {sinter.param = "w"})
    -> (memref<4xf32> {sinter.updates = 0 : i64}) {
  %a = memref.alloc() : memref<4xf32>
  memref.copy %p, %a : memref<4xf32> to memref<4xf32>
  return %a : memref<4xf32>
}
