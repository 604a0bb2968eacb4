// RUN: sinter-opt %s -sinter-cuda-map-to-gpu -canonicalize | FileCheck %s --check-prefix=MAP
// RUN: sinter-opt %s -sinter-cuda-map-to-gpu -sinter-cuda-unroll-sums -sinter-cuda-launches-on-host \
// RUN:   | mlir-opt -arith-expand -expand-strided-metadata -lower-affine -convert-scf-to-cf \
// RUN:       -finalize-memref-to-llvm -convert-arith-to-llvm -convert-func-to-llvm \
// RUN:       -convert-cf-to-llvm -reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s

// An embedding gradient's scatter-add runs as a thread per column and group
// of rows (sinter-cuda-map-to-gpu's column nests, after the CUDA pipeline's
// unrolling), one thread after another here. Ids repeat, and every third
// position's values are scaled by 2^24, so that a sum in another order
// rounds differently: an element that no thread adds into, or two do, a
// thread that adds a position into another group's row, or one that adds
// its positions out of order, shows as a wrong count.

// 700 columns: 3 blocks of 256 threads, repeated for each of 23 groups of
// rows. A warp tests 32 positions at a time, a lane each, and every lane
// walks the matching ones its ballot gives (40 positions: the second tile
// is partly past the end); the host runs each thread's ballot as its
// warp's 32 tests.
// MAP-LABEL: func.func @scatter_add(
// MAP:         gpu.launch blocks({{.*}}) in ({{.*}} = %c69{{.*}}) threads({{.*}}) in ({{.*}} = %c256
// MAP:           %[[LANE:.*]] = gpu.lane_id
// MAP:           scf.for %[[TILE:.*]] = %c0 to %c40 step %c32 {
// MAP:             %[[K:.*]] = arith.addi %[[TILE]], %[[LANE]]
// MAP:             memref.load %arg0[
// MAP:             %[[VOTES:.*]] = nvvm.vote.sync  ballot
// MAP:             scf.while (%[[LEFT:.*]] = %[[VOTES]])
// MAP:               llvm.intr.cttz
// MAP:               scf.if
// MAP:                 memref.store
func.func @scatter_add(%ids: memref<40xi32>, %g: memref<40x700xf32>, %t: memref<23x700xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  %c700 = arith.constant 700 : index
  scf.for %p = %c0 to %c40 step %c1 {
    %id = memref.load %ids[%p] : memref<40xi32>
    %row = arith.index_cast %id : i32 to index
    scf.for %d = %c0 to %c700 step %c1 {
      %x = memref.load %g[%p, %d] : memref<40x700xf32>
      %old = memref.load %t[%row, %d] : memref<23x700xf32>
      %new = arith.addf %old, %x : f32
      memref.store %new, %t[%row, %d] : memref<23x700xf32>
    }
  }
  return
}

func.func private @printI64(i64)
func.func private @printNewline()

// CHECK: 0
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c23 = arith.constant 23 : index
  %c40 = arith.constant 40 : index
  %c700 = arith.constant 700 : index
  %c1000 = arith.constant 1000 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %ids = memref.alloc() : memref<40xi32>
  %g = memref.alloc() : memref<40x700xf32>
  %t = memref.alloc() : memref<23x700xf32>
  %wrong = memref.alloc() : memref<1xi64>
  memref.store %zero, %wrong[%c0] : memref<1xi64>
  // ids[p] = (7 p) mod 23, then every fifth position takes row 3 again:
  // rows that repeat, rows that several groups' threads skip.
  %c5 = arith.constant 5 : index
  %c3 = arith.constant 3 : index
  %c7 = arith.constant 7 : index
  scf.for %p = %c0 to %c40 step %c1 {
    %seven = arith.muli %p, %c7 : index
    %r = arith.remui %seven, %c23 : index
    %fifth = arith.remui %p, %c5 : index
    %isFifth = arith.cmpi eq, %fifth, %c0 : index
    %row = arith.select %isFifth, %c3, %r : index
    %id = arith.index_cast %row : index to i32
    memref.store %id, %ids[%p] : memref<40xi32>
    scf.for %d = %c0 to %c700 step %c1 {
      %hi = arith.muli %p, %c1000 : index
      %v = arith.addi %hi, %d : index
      %vi = arith.index_cast %v : index to i64
      %vs = arith.sitofp %vi : i64 to f32
      %third = arith.remui %p, %c3 : index
      %isThird = arith.cmpi eq, %third, %c0 : index
      %big = arith.constant 16777216.0 : f32
      %unit = arith.constant 1.0 : f32
      %scale = arith.select %isThird, %big, %unit : f32
      %vf = arith.mulf %vs, %scale : f32
      memref.store %vf, %g[%p, %d] : memref<40x700xf32>
    }
  }
  scf.for %r = %c0 to %c23 step %c1 {
    scf.for %d = %c0 to %c700 step %c1 {
      %ri = arith.index_cast %r : index to i64
      %rf = arith.sitofp %ri : i64 to f32
      memref.store %rf, %t[%r, %d] : memref<23x700xf32>
    }
  }
  call @scatter_add(%ids, %g, %t) : (memref<40xi32>, memref<40x700xf32>, memref<23x700xf32>) -> ()
  // t[r, d] must be r plus g[p, d] for each position p whose id is r.
  scf.for %r = %c0 to %c23 step %c1 {
    scf.for %d = %c0 to %c700 step %c1 {
      %ri = arith.index_cast %r : index to i64
      %rf = arith.sitofp %ri : i64 to f32
      %want = scf.for %p = %c0 to %c40 step %c1 iter_args(%sum = %rf) -> f32 {
        %id = memref.load %ids[%p] : memref<40xi32>
        %row = arith.index_cast %id : i32 to index
        %mine = arith.cmpi eq, %row, %r : index
        %x = memref.load %g[%p, %d] : memref<40x700xf32>
        %added = arith.addf %sum, %x : f32
        %next = arith.select %mine, %added, %sum : f32
        scf.yield %next : f32
      }
      %v = memref.load %t[%r, %d] : memref<23x700xf32>
      %bad = arith.cmpf une, %v, %want : f32
      %inc = arith.select %bad, %one, %zero : i64
      %old = memref.load %wrong[%c0] : memref<1xi64>
      %new = arith.addi %old, %inc : i64
      memref.store %new, %wrong[%c0] : memref<1xi64>
    }
  }
  %n = memref.load %wrong[%c0] : memref<1xi64>
  call @printI64(%n) : (i64) -> ()
  call @printNewline() : () -> ()
  memref.dealloc %ids : memref<40xi32>
  memref.dealloc %g : memref<40x700xf32>
  memref.dealloc %t : memref<23x700xf32>
  memref.dealloc %wrong : memref<1xi64>
  return
}
