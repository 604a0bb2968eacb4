// RUN: sinter-opt %s -sinter-cuda-merge-parallel-loops -split-input-file | FileCheck %s

// Attention's gradients copied into the query, key and value columns of
// one [tokens, 3 x features] buffer: three nests over the same space whose
// writes interleave without meeting (each row's columns 0-7, 8-15, 16-23)
// become one nest that does all three.
// CHECK-LABEL: func.func @interleaved_columns(
// CHECK:         scf.parallel
// CHECK-COUNT-3:   memref.store
// CHECK-NOT:     scf.parallel
func.func @interleaved_columns(%q: memref<4x8xf32>, %k: memref<4x8xf32>, %v: memref<4x8xf32>,
                               %ws: memref<512xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %all = memref.view %ws[%c0][] : memref<512xi8> to memref<4x24xf32>
  %sq = memref.subview %all[0, 0] [4, 8] [1, 1] : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %q[%i, %j] : memref<4x8xf32>
    memref.store %x, %sq[%i, %j] : memref<4x8xf32, strided<[24, 1]>>
    scf.reduce
  }
  %sk = memref.subview %all[0, 8] [4, 8] [1, 1] : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1], offset: 8>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %k[%i, %j] : memref<4x8xf32>
    memref.store %x, %sk[%i, %j] : memref<4x8xf32, strided<[24, 1], offset: 8>>
    scf.reduce
  }
  %sv = memref.subview %all[0, 16] [4, 8] [1, 1] : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1], offset: 16>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %v[%i, %j] : memref<4x8xf32>
    memref.store %x, %sv[%i, %j] : memref<4x8xf32, strided<[24, 1], offset: 16>>
    scf.reduce
  }
  return
}

// -----

// Nests that stay apart: the second reads what the first writes; columns
// that overlap (0-7 and 4-11); another space.
// CHECK-LABEL: func.func @stay_apart(
// CHECK-COUNT-4: scf.parallel
func.func @stay_apart(%a: memref<4x8xf32>, %ws: memref<512xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  %all = memref.view %ws[%c0][] : memref<512xi8> to memref<4x24xf32>
  %t = memref.view %ws[%c256][] : memref<512xi8> to memref<4x8xf32>
  %s0 = memref.subview %all[0, 0] [4, 8] [1, 1] : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x8xf32>
    memref.store %x, %s0[%i, %j] : memref<4x8xf32, strided<[24, 1]>>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %s0[%i, %j] : memref<4x8xf32, strided<[24, 1]>>
    memref.store %x, %t[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  %s4 = memref.subview %all[0, 4] [4, 8] [1, 1] : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1], offset: 4>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x8xf32>
    memref.store %x, %s4[%i, %j] : memref<4x8xf32, strided<[24, 1], offset: 4>>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %a[%i, %c0] : memref<4x8xf32>
    memref.store %x, %t[%i, %c1] : memref<4x8xf32>
    scf.reduce
  }
  return
}

// -----

// More that stays apart: a view at a shift known only at run time (its
// columns may be any); a second nest that writes what the first reads; a
// call between two nests.
// CHECK-LABEL: func.func @stay_apart_too(
// CHECK-COUNT-5: scf.parallel
func.func private @touch()
func.func @stay_apart_too(%a: memref<4x8xf32>, %s: index, %ws: memref<512xi8> {sinter.workspace}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c256 = arith.constant 256 : index
  %x = memref.view %ws[%c0][] : memref<512xi8> to memref<4x16xf32>
  %y = memref.view %ws[%s][] : memref<512xi8> to memref<4x16xf32>
  %t = memref.view %ws[%c256][] : memref<512xi8> to memref<4x8xf32>
  %sx = memref.subview %x[0, 0] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1]>>
  %sy = memref.subview %y[0, 8] [4, 8] [1, 1] : memref<4x16xf32> to memref<4x8xf32, strided<[16, 1], offset: 8>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<4x8xf32>
    memref.store %v, %sx[%i, %j] : memref<4x8xf32, strided<[16, 1]>>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %sy[%i, %j] : memref<4x8xf32, strided<[16, 1], offset: 8>>
    memref.store %v, %t[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<4x8xf32>
    memref.store %v, %t[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  call @touch() : () -> ()
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %t[%i, %j] : memref<4x8xf32>
    memref.store %v, %a[%i, %j] : memref<4x8xf32>
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    %v = memref.load %a[%i, %j] : memref<4x8xf32>
    memref.store %v, %sx[%i, %j] : memref<4x8xf32, strided<[16, 1]>>
    scf.reduce
  }
  return
}
