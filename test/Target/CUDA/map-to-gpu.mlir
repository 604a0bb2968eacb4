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

// -----

// A scatter-add of rows (an embedding's gradient): ids may repeat, so the
// positions stay in order, but each column is its own: a thread per column
// walks the positions. The rows are split too: the 300 columns' 2 blocks
// are repeated for 10 groups of rows (as many as the table has, here), and
// a thread adds only into the rows of its group (id mod 10), so every
// element still has one thread, which adds in the positions' order. The
// positions are tested a warp at a time: each lane tests one of 32 (every
// lane, with a column or not), a ballot gathers the answers, and each
// lane with a column visits the matching positions, lowest first. A nest
// whose inner loop writes an element of another column (the row sum
// below), or reads a written buffer at another column, stays on one thread.
// CHECK-LABEL: func.func @scatter_add(
// CHECK-SAME:    %[[IDS:[a-z0-9]+]]: memref<40xi32>, %[[G:[a-z0-9]+]]: memref<40x300xf32>, %[[T:[a-z0-9]+]]: memref<10x300xf32>
// CHECK:       gpu.launch blocks(%[[BID:[a-z0-9]+]], {{.*}}) in ({{.*}} = %c20{{.*}}) threads(%[[TID:[a-z0-9]+]], {{.*}}) in ({{.*}} = %c256
// CHECK:         %[[GROUP:.*]] = arith.divui %[[BID]], %c2
// CHECK:         %[[CB:.*]] = arith.remui %[[BID]], %c2
// CHECK:         %[[BASE:.*]] = arith.muli %[[CB]], %c256
// CHECK:         %[[COL:.*]] = arith.addi %[[BASE]], %[[TID]]
// CHECK:         %[[IN:.*]] = arith.cmpi ult, %[[COL]], %c300
// CHECK:         %[[LANE:.*]] = gpu.lane_id
// CHECK:         scf.for %[[TILE:[a-z0-9]+]] = %c0 to %c40 step %c32 {
// CHECK:           %[[K:.*]] = arith.addi %[[TILE]], %[[LANE]]
// CHECK:           %[[EXISTS:.*]] = arith.cmpi ult, %[[K]], %c40
// CHECK:           %[[SAFE:.*]] = arith.select %[[EXISTS]], %[[K]], %c0
// CHECK:           %[[TESTED:.*]] = memref.load %[[IDS]][%[[SAFE]]]
// CHECK:           %[[TROW:.*]] = arith.index_cast %[[TESTED]]
// CHECK:           %[[R:.*]] = arith.remui %[[TROW]], %c10
// CHECK:           %[[SAME:.*]] = arith.cmpi eq, %[[R]], %[[GROUP]]
// CHECK:           %[[MINE:.*]] = arith.andi %[[EXISTS]], %[[SAME]]
// CHECK:           %[[VOTES:.*]] = nvvm.vote.sync  ballot %c-1_i32, %[[MINE]] -> i32
// CHECK:           scf.while (%[[LEFT:.*]] = %[[VOTES]]) : (i32) -> i32 {
// CHECK:             arith.cmpi ne, %[[LEFT]], %c0_i32
// CHECK:           } do {
// CHECK:           ^bb0(%[[NOW:.*]]: i32):
// CHECK:             %[[BIT:.*]] = "llvm.intr.cttz"(%[[NOW]])
// CHECK:             %[[LESS:.*]] = arith.subi %[[NOW]], %c1_i32
// CHECK:             %[[REST:.*]] = arith.andi %[[NOW]], %[[LESS]]
// CHECK:             scf.if %[[IN]] {
// CHECK:               %[[OFF:.*]] = arith.index_castui %[[BIT]]
// CHECK:               %[[P:.*]] = arith.addi %[[TILE]], %[[OFF]]
// CHECK:               %[[ID:.*]] = memref.load %[[IDS]][%[[P]]]
// CHECK:               %[[ROW:.*]] = arith.index_cast %[[ID]]
// CHECK:               %[[X:.*]] = memref.load %[[G]][%[[P]], %[[COL]]]
// CHECK:               %[[OLD:.*]] = memref.load %[[T]][%[[ROW]], %[[COL]]]
// CHECK:               %[[NEW:.*]] = arith.addf %[[OLD]], %[[X]]
// CHECK:               memref.store %[[NEW]], %[[T]][%[[ROW]], %[[COL]]]
// CHECK:             scf.yield %[[REST]]
// CHECK-NOT:         scf.for
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      scf.for
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      scf.for
func.func @scatter_add(%ids: memref<40xi32>, %g: memref<40x300xf32>, %t: memref<10x300xf32>,
                       %sums: memref<5xf32>) attributes {sinter.phase = "train"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c40 = arith.constant 40 : index
  %c300 = arith.constant 300 : index
  scf.for %p = %c0 to %c40 step %c1 {
    %id = memref.load %ids[%p] : memref<40xi32>
    %row = arith.index_cast %id : i32 to index
    scf.for %d = %c0 to %c300 step %c1 {
      %x = memref.load %g[%p, %d] : memref<40x300xf32>
      %old = memref.load %t[%row, %d] : memref<10x300xf32>
      %new = arith.addf %old, %x : f32
      memref.store %new, %t[%row, %d] : memref<10x300xf32>
    }
  }
  scf.for %p = %c0 to %c5 step %c1 {
    scf.for %d = %c0 to %c300 step %c1 {
      %x = memref.load %g[%p, %d] : memref<40x300xf32>
      %old = memref.load %sums[%p] : memref<5xf32>
      %new = arith.addf %old, %x : f32
      memref.store %new, %sums[%p] : memref<5xf32>
    }
  }
  scf.for %p = %c0 to %c5 step %c1 {
    scf.for %d = %c1 to %c300 step %c1 {
      %prev = arith.subi %d, %c1 : index
      %x = memref.load %t[%p, %prev] : memref<10x300xf32>
      memref.store %x, %t[%p, %d] : memref<10x300xf32>
    }
  }
  return
}

// -----

// A kernel that reads a constant table (a causal mask), here through a
// reshaping view, takes its own memref.get_global and view: the host's is
// at a host address.
// CHECK-LABEL: func.func @mask(
// CHECK:       gpu.launch
// CHECK:         %[[TABLE:.*]] = memref.get_global @causal : memref<4x4xi1>
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %[[TABLE]]
// CHECK:         memref.load %[[FLAT]]
memref.global "private" constant @causal : memref<4x4xi1> = dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]>
func.func @mask(%s: memref<16xf32>) attributes {sinter.phase = "train"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %ninf = arith.constant 0xFF800000 : f32
  %m = memref.get_global @causal : memref<4x4xi1>
  %flat = memref.collapse_shape %m [[0, 1]] : memref<4x4xi1> into memref<16xi1>
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    %future = memref.load %flat[%i] : memref<16xi1>
    %v = memref.load %s[%i] : memref<16xf32>
    %w = arith.select %future, %ninf, %v : f32
    memref.store %w, %s[%i] : memref<16xf32>
    scf.reduce
  }
  return
}

// -----

// A store's kernel reads again the loads it needs, unless something may
// write their buffer between the load and the store (here a kernel): that
// load keeps the value it had, on the host.
// CHECK-LABEL: func.func @load_then_kernel(
// CHECK-SAME:    %[[ACC:[a-z0-9]+]]: memref<f32>
// CHECK:       %[[OLD:.*]] = memref.load %[[ACC]][]
// CHECK:       gpu.launch
// CHECK:       gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c1, {{.*}} = %c1, {{.*}} = %c1)
// CHECK-NOT:     memref.load %[[ACC]]
// CHECK:         arith.addf %[[OLD]]
// CHECK:         memref.store {{.*}}, %[[ACC]][]
func.func @load_then_kernel(%acc: memref<f32>, %x: memref<4xf32>) attributes {sinter.phase = "train"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %old = memref.load %acc[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %x[%i] : memref<4xf32>
    memref.store %v, %acc[] : memref<f32>
    scf.reduce
  }
  %new = arith.addf %old, %one : f32
  memref.store %new, %acc[] : memref<f32>
  return
}
