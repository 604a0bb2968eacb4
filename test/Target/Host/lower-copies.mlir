// RUN: sinter-opt %s -sinter-lower-copies | FileCheck %s

// The LLVM lowering turns a memref.copy of a non-contiguous buffer into a
// call of MLIR's C runner library, which Sinter programs do not link. Every
// copy becomes a linalg.copy from the same source into the same target
// (lowered to loops like any other linalg op), whatever its layout, its
// shape or the region it sits in.
// CHECK-LABEL: func.func @copies(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: memref<4x8xf32>, %[[B:[a-z0-9]+]]: memref<4x8xf32>,
// CHECK-SAME:    %[[S:[a-z0-9]+]]: memref<8x4xf32, strided<[1, 8]>>,
// CHECK-SAME:    %[[D:[a-z0-9]+]]: memref<?xf64>, %[[E:[a-z0-9]+]]: memref<?xf64>)
// CHECK-NOT:   memref.copy
// CHECK:       linalg.copy ins(%[[A]] : memref<4x8xf32>) outs(%[[B]] : memref<4x8xf32>)
// CHECK:       %[[T:.*]] = memref.transpose %[[A]]
// CHECK-NEXT:  linalg.copy ins(%[[T]] : memref<8x4xf32, strided<[1, 8]>>) outs(%[[S]] : memref<8x4xf32, strided<[1, 8]>>)
// CHECK-NEXT:  linalg.copy ins(%[[D]] : memref<?xf64>) outs(%[[E]] : memref<?xf64>)
// CHECK:       scf.for
// CHECK-NEXT:    linalg.copy ins(%[[B]] : memref<4x8xf32>) outs(%[[A]] : memref<4x8xf32>)
// CHECK-NEXT:  }
// CHECK-NOT:   memref.copy
// CHECK:       return
func.func @copies(%a: memref<4x8xf32>, %b: memref<4x8xf32>,
                  %s: memref<8x4xf32, strided<[1, 8]>>,
                  %d: memref<?xf64>, %e: memref<?xf64>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  %t = memref.transpose %a (i, j) -> (j, i) : memref<4x8xf32> to memref<8x4xf32, strided<[1, 8]>>
  memref.copy %t, %s : memref<8x4xf32, strided<[1, 8]>> to memref<8x4xf32, strided<[1, 8]>>
  memref.copy %d, %e : memref<?xf64> to memref<?xf64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    memref.copy %b, %a : memref<4x8xf32> to memref<4x8xf32>
  }
  return
}

// A copy between two equal views of one buffer (bufferization leaves one
// where a piece was computed in its place) copies nothing: it is dropped.
// A copy between different views of it stays.
// CHECK-LABEL: func.func @same_elements(
// CHECK-NOT:   linalg.copy
// CHECK:       %[[V1:.*]] = memref.subview %{{.*}}[0, 4] [4, 4] [1, 1]
// CHECK-NEXT:  memref.subview %{{.*}}[0, 4] [4, 4] [1, 1]
// CHECK-NEXT:  %[[V0:.*]] = memref.subview %{{.*}}[0, 0] [4, 4] [1, 1]
// CHECK-NEXT:  linalg.copy ins(%[[V1]] : {{.*}}) outs(%[[V0]] : {{.*}})
// CHECK-NOT:   linalg.copy
func.func @same_elements(%a: memref<4x8xf32>) {
  %x = memref.subview %a[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  %y = memref.subview %a[0, 4] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  memref.copy %x, %y : memref<4x4xf32, strided<[8, 1], offset: 4>> to memref<4x4xf32, strided<[8, 1], offset: 4>>
  %z = memref.subview %a[0, 0] [4, 4] [1, 1] : memref<4x8xf32> to memref<4x4xf32, strided<[8, 1]>>
  memref.copy %x, %z : memref<4x4xf32, strided<[8, 1], offset: 4>> to memref<4x4xf32, strided<[8, 1]>>
  return
}
