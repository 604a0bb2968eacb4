// RUN: sinter-opt %s -sinter-plan-memory -split-input-file | FileCheck %s

// Three intermediates in a chain: %a dies when %c is born, so %c reuses its
// bytes; %b overlaps both. Allocations become views of a new last argument.
// CHECK-LABEL: func.func @chain(
// CHECK-SAME:    %[[ARENA:[a-z0-9]+]]: memref<8192xi8> {sinter.workspace})
// CHECK-SAME:    attributes {sinter.arena_bytes = 8192 : i64, sinter.communication_bytes = 0 : i64, sinter.phase = "eval", sinter.unplanned_bytes = 12288 : i64}
// CHECK-NOT:   memref.alloc
// CHECK:       %[[O1:.*]] = arith.constant 0 : index
// CHECK-NEXT:  memref.view %[[ARENA]][%[[O1]]][] : memref<8192xi8> to memref<1024xf32>
// CHECK:       %[[O2:.*]] = arith.constant 4096 : index
// CHECK-NEXT:  memref.view %[[ARENA]][%[[O2]]][] : memref<8192xi8> to memref<1024xf32>
// CHECK:       %[[O3:.*]] = arith.constant 0 : index
// CHECK-NEXT:  memref.view %[[ARENA]][%[[O3]]][] : memref<8192xi8> to memref<1024xf32>
// CHECK-NOT:   memref.dealloc
func.func @chain(%x: memref<1024xf32>, %out: memref<1024xf32>) attributes {sinter.phase = "eval"} {
  %a = memref.alloc() : memref<1024xf32>
  linalg.copy ins(%x : memref<1024xf32>) outs(%a : memref<1024xf32>)
  %b = memref.alloc() : memref<1024xf32>
  linalg.copy ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>)
  memref.dealloc %a : memref<1024xf32>
  %c = memref.alloc() : memref<1024xf32>
  linalg.copy ins(%b : memref<1024xf32>) outs(%c : memref<1024xf32>)
  linalg.copy ins(%c : memref<1024xf32>) outs(%out : memref<1024xf32>)
  return
}

// -----

// A view keeps its buffer alive until the view's last use.
// CHECK-LABEL: func.func @view
// CHECK-SAME:    sinter.arena_bytes = 512 : i64
func.func @view(%x: memref<4x16xf32>, %out: memref<64xf32>) attributes {sinter.phase = "eval"} {
  %a = memref.alloc() : memref<4x16xf32>
  linalg.copy ins(%x : memref<4x16xf32>) outs(%a : memref<4x16xf32>)
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x16xf32> into memref<64xf32>
  %b = memref.alloc() : memref<64xf32>
  linalg.copy ins(%flat : memref<64xf32>) outs(%b : memref<64xf32>)
  linalg.copy ins(%b : memref<64xf32>) outs(%out : memref<64xf32>)
  return
}

// -----

// Functions that are not steps are left alone.
// CHECK-LABEL: func.func @helper(%{{.*}}: memref<4xf32>)
// CHECK:       memref.alloc
func.func @helper(%x: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%a : memref<4xf32>)
  return
}

// -----

// A loop that carries a buffer keeps it alive until the loop's result dies:
// %b must not reuse %a's bytes while the loop result is read.
// CHECK-LABEL: func.func @loop_carried
// CHECK-SAME:    sinter.arena_bytes = 128 : i64
func.func @loop_carried(%x: memref<16xf32>, %out: memref<16xf32>) attributes {sinter.phase = "eval"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<16xf32>
  linalg.copy ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %a) -> (memref<16xf32>) {
    scf.yield %acc : memref<16xf32>
  }
  %b = memref.alloc() : memref<16xf32>
  linalg.copy ins(%x : memref<16xf32>) outs(%b : memref<16xf32>)
  linalg.add ins(%r, %b : memref<16xf32>, memref<16xf32>) outs(%out : memref<16xf32>)
  return
}

// -----

// A loop's body is planned on its own: its buffers (one iteration's) share
// an arena that is one buffer of the enclosing block, live during the loop.
// Here %a dies before %b is born, and the loop's arena before %c: 4 KiB in
// all, for 12 KiB of buffers.
// CHECK-LABEL: func.func @loop(
// CHECK-SAME:    %[[WS:[a-z0-9]+]]: memref<4096xi8> {sinter.workspace})
// CHECK-SAME:    sinter.arena_bytes = 4096 : i64
// CHECK-SAME:    sinter.unplanned_bytes = 12288 : i64
// CHECK:       %[[BODY:.*]] = memref.view %[[WS]][%{{.*}}][] : memref<4096xi8> to memref<4096xi8>
// CHECK:       scf.for
// CHECK:         memref.view %[[BODY]][%{{.*}}][] : memref<4096xi8> to memref<1024xf32>
// CHECK:         memref.view %[[BODY]][%{{.*}}][] : memref<4096xi8> to memref<1024xf32>
// CHECK:       memref.view %[[WS]][%{{.*}}][] : memref<4096xi8> to memref<1024xf32>
func.func @loop(%x: memref<1024xf32>, %out: memref<1024xf32>) attributes {sinter.phase = "train"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %a = memref.alloc() : memref<1024xf32>
    linalg.copy ins(%x : memref<1024xf32>) outs(%a : memref<1024xf32>)
    memref.dealloc %a : memref<1024xf32>
    %b = memref.alloc() : memref<1024xf32>
    linalg.copy ins(%x : memref<1024xf32>) outs(%b : memref<1024xf32>)
    linalg.copy ins(%b : memref<1024xf32>) outs(%out : memref<1024xf32>)
  }
  %c = memref.alloc() : memref<1024xf32>
  linalg.copy ins(%out : memref<1024xf32>) outs(%c : memref<1024xf32>)
  linalg.copy ins(%c : memref<1024xf32>) outs(%out : memref<1024xf32>)
  return
}

// -----

// A block's buffers live in a scratch arena each call passes as a new last
// argument; the caller allocates it just before the call, so the scratch of
// two calls shares the caller's bytes, and the layer's result (a caller's
// buffer) stays apart from both.
// CHECK-LABEL: func.func private @layer(
// CHECK-SAME:    %{{.*}}: memref<256xf32>, %{{.*}}: memref<256xf32>, %[[SCRATCH:[a-z0-9]+]]: memref<1024xi8> {sinter.workspace})
// CHECK:         memref.view %[[SCRATCH]]
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[ARENA:[a-z0-9]+]]: memref<2048xi8> {sinter.workspace})
// CHECK-SAME:    sinter.arena_bytes = 2048 : i64
// CHECK:         %[[H:.*]] = memref.view %[[ARENA]]
// CHECK:         arith.constant [[OFFSET:[0-9]+]] : index
// CHECK-NEXT:    %[[S0:.*]] = memref.view %[[ARENA]]{{.*}} to memref<1024xi8>
// CHECK-NEXT:    call @layer(%{{.*}}, %[[H]], %[[S0]])
// CHECK:         arith.constant [[OFFSET]] : index
// CHECK-NEXT:    %[[S1:.*]] = memref.view %[[ARENA]]{{.*}} to memref<1024xi8>
// CHECK-NEXT:    call @layer(%[[H]], %{{.*}}, %[[S1]])
func.func private @layer(%x: memref<256xf32>, %y: memref<256xf32>) attributes {sinter.block = "h"} {
  %t = memref.alloc() : memref<256xf32>
  linalg.copy ins(%x : memref<256xf32>) outs(%t : memref<256xf32>)
  linalg.copy ins(%t : memref<256xf32>) outs(%y : memref<256xf32>)
  return
}
func.func @step(%x: memref<256xf32>, %out: memref<256xf32>) attributes {sinter.phase = "eval"} {
  %h = memref.alloc() : memref<256xf32>
  call @layer(%x, %h) : (memref<256xf32>, memref<256xf32>) -> ()
  call @layer(%h, %out) : (memref<256xf32>, memref<256xf32>) -> ()
  return
}

// -----

// Buffers of collectives (`sinter.communication`, as the runtime calls mark
// them) are counted apart: the most live at once is the first two, 4096 +
// 1024 bytes; the third (2048) is born after the first dies.
// CHECK-LABEL: func.func @communication
// CHECK-SAME:    sinter.communication_bytes = 5120 : i64
func.func @communication(%x: memref<1024xf32>, %out: memref<256xf32>) attributes {sinter.phase = "train"} {
  %rows = memref.alloc() {sinter.communication} : memref<1024xf32>
  linalg.copy ins(%x : memref<1024xf32>) outs(%rows : memref<1024xf32>)
  %shard = memref.alloc() {sinter.communication} : memref<256xf32>
  %part = memref.subview %rows[0] [256] [1] : memref<1024xf32> to memref<256xf32, strided<[1]>>
  linalg.copy ins(%part : memref<256xf32, strided<[1]>>) outs(%shard : memref<256xf32>)
  %later = memref.alloc() {sinter.communication} : memref<512xf32>
  %part2 = memref.subview %later[0] [256] [1] : memref<512xf32> to memref<256xf32, strided<[1]>>
  linalg.copy ins(%shard : memref<256xf32>) outs(%part2 : memref<256xf32, strided<[1]>>)
  linalg.copy ins(%part2 : memref<256xf32, strided<[1]>>) outs(%out : memref<256xf32>)
  return
}
