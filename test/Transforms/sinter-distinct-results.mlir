// RUN: sinter-opt %s -sinter-distinct-results -split-input-file | FileCheck %s

// Every buffer a step returns becomes one of the caller's output buffers, so
// no two results may share a buffer and none may be an argument. The first
// return of a fresh allocation keeps it; a second return of the same
// allocation, and a returned argument, get a copy in an allocation of their
// own. A dynamically shaped result cannot be copied into a static buffer and
// is left as it is.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: memref<4xf32>, %[[D:[a-z0-9]+]]: memref<?xf32>)
// CHECK:       %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK:       %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK:       linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK-NEXT:  %[[A2:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:  memref.copy %[[A]], %[[A2]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:  %[[X2:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT:  memref.copy %[[X]], %[[X2]] : memref<4xf32> to memref<4xf32>
// CHECK-NEXT:  return %[[A]], %[[A2]], %[[X2]], %[[B]], %[[D]] :
func.func @step(%x: memref<4xf32>, %d: memref<?xf32>)
    -> (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<?xf32>)
    attributes {sinter.phase = "eval"} {
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%a : memref<4xf32>)
  %b = memref.alloc() : memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%b : memref<4xf32>)
  return %a, %a, %x, %b, %d : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<?xf32>
}

// -----

// A reshaped view of an allocation that nothing else returns is allocated
// in the returned shape: the loop writes it through the inverse reshape,
// and the caller takes the buffer over, with no copy.
// CHECK-LABEL: func.func @view(
// CHECK:       %[[WHOLE:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT:  %[[AS:.*]] = memref.expand_shape %[[WHOLE]] {{\[}}[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
// CHECK-NEXT:  linalg.copy ins(%{{.*}} : memref<2x4xf32>) outs(%[[AS]] : memref<2x4xf32>)
// CHECK-NOT:   memref.copy
// CHECK:       return %[[WHOLE]] : memref<8xf32>
func.func @view(%x: memref<2x4xf32>) -> memref<8xf32> attributes {sinter.phase = "train"} {
  %a = memref.alloc() : memref<2x4xf32>
  linalg.copy ins(%x : memref<2x4xf32>) outs(%a : memref<2x4xf32>)
  %flat = memref.collapse_shape %a [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  return %flat : memref<8xf32>
}

// -----

// When the allocation is also returned itself, the view gets a copy.
// CHECK-LABEL: func.func @view_and_buffer(
// CHECK:       %[[A:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK:       %[[FLAT:.*]] = memref.collapse_shape %[[A]]
// CHECK-NEXT:  %[[C:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT:  memref.copy %[[FLAT]], %[[C]] : memref<8xf32> to memref<8xf32>
// CHECK-NEXT:  return %[[C]], %[[A]] : memref<8xf32>, memref<2x4xf32>
func.func @view_and_buffer(%x: memref<2x4xf32>) -> (memref<8xf32>, memref<2x4xf32>)
    attributes {sinter.phase = "train"} {
  %a = memref.alloc() : memref<2x4xf32>
  linalg.copy ins(%x : memref<2x4xf32>) outs(%a : memref<2x4xf32>)
  %flat = memref.collapse_shape %a [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  return %flat, %a : memref<8xf32>, memref<2x4xf32>
}

// -----

// Functions that are not steps keep their results.
// CHECK-LABEL: func.func @helper(
// CHECK-NOT:   memref.alloc
// CHECK-NOT:   memref.copy
// CHECK:       return %arg0, %arg0 : memref<4xf32>, memref<4xf32>
func.func @helper(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  return %x, %x : memref<4xf32>, memref<4xf32>
}
