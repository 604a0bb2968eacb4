// RUN: sinter-opt %s -sinter-cuda-map-to-gpu | FileCheck %s --check-prefix=MAP
// RUN: sinter-opt %s -sinter-cuda-map-to-gpu -sinter-cuda-launches-on-host \
// RUN:   | mlir-opt -arith-expand -expand-strided-metadata -lower-affine -convert-scf-to-cf \
// RUN:       -finalize-memref-to-llvm -convert-arith-to-llvm -convert-func-to-llvm \
// RUN:       -convert-cf-to-llvm -reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s

// The kernels run one thread after another on the CPU. Every element a
// nest should write is checked, and every other element must keep the
// value written before the kernel: a thread that skips an iteration, runs
// one twice or strays past the end shows as a wrong count. The values are
// integers below 2^24, exact in f32.

// A nest of 1.1M iterations shares each thread between four iterations a
// block apart, their loads first; its last block (1.1M is not a multiple
// of 1024) checks each.
// MAP-LABEL: func.func @twice_plus_one(
// MAP:         gpu.launch blocks({{.*}}) in ({{.*}} = %{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c256
// MAP:           scf.if
// MAP-COUNT-4:     memref.load
// MAP-COUNT-4:     arith.mulf
// MAP-COUNT-4:     memref.store
// MAP:           } else {
// MAP-COUNT-4:     scf.if
func.func @twice_plus_one(%in: memref<1100x1000xf32>, %out: memref<1100x1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = arith.constant 1100 : index
  %cols = arith.constant 1000 : index
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<1100x1000xf32>
    %y = arith.mulf %x, %two : f32
    %z = arith.addf %y, %one : f32
    memref.store %z, %out[%i, %j] : memref<1100x1000xf32>
    scf.reduce
  }
  return
}

// An update in place (each iteration reads and writes its own element),
// over every other element from 3: the lower bound and step come back in
// each of a thread's iterations.
// MAP-LABEL: func.func @add_in_place(
// MAP:         gpu.launch
// MAP:           scf.if
// MAP-COUNT-8:     memref.load
// MAP-COUNT-4:     memref.store
func.func @add_in_place(%in: memref<2100010xf32>, %acc: memref<2100010xf32>) {
  %lb = arith.constant 3 : index
  %ub = arith.constant 2100003 : index
  %step = arith.constant 2 : index
  scf.parallel (%k) = (%lb) to (%ub) step (%step) {
    %x = memref.load %in[%k] : memref<2100010xf32>
    %a = memref.load %acc[%k] : memref<2100010xf32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %acc[%k] : memref<2100010xf32>
    scf.reduce
  }
  return
}

// A small nest keeps a thread per iteration.
// MAP-LABEL: func.func @small(
// MAP:         gpu.launch
// MAP-COUNT-1:   memref.load
// MAP-NOT:       memref.load
// MAP:         return
func.func @small(%in: memref<37x29xf32>, %out: memref<37x29xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = arith.constant 37 : index
  %cols = arith.constant 29 : index
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%rows, %cols) step (%c1, %c1) {
    %x = memref.load %in[%i, %j] : memref<37x29xf32>
    %y = arith.mulf %x, %two : f32
    %z = arith.addf %y, %one : f32
    memref.store %z, %out[%i, %j] : memref<37x29xf32>
    scf.reduce
  }
  return
}

func.func private @printI64(i64)
func.func private @printNewline()

// Counts into `wrong` the elements of `got` that differ from 2 * in + 1,
// with `in` the element's flat index. (Loops that return values would stay
// on the host; these run as kernels too.)
func.func @wrong_twice_plus_one(%got: memref<?x?xf32>, %wrong: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %two = arith.constant 2.0 : f32
  %onef = arith.constant 1.0 : f32
  %rows = memref.dim %got, %c0 : memref<?x?xf32>
  %cols = memref.dim %got, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %row = arith.muli %i, %cols : index
      %flat = arith.addi %row, %j : index
      %fi = arith.index_cast %flat : index to i64
      %f = arith.sitofp %fi : i64 to f32
      %t = arith.mulf %f, %two : f32
      %want = arith.addf %t, %onef : f32
      %v = memref.load %got[%i, %j] : memref<?x?xf32>
      %bad = arith.cmpf une, %v, %want : f32
      %inc = arith.select %bad, %one, %zero : i64
      %old = memref.load %wrong[%c0] : memref<1xi64>
      %new = arith.addi %old, %inc : i64
      memref.store %new, %wrong[%c0] : memref<1xi64>
    }
  }
  return
}

// Prints the count in `wrong` and sets it back to 0.
func.func @report(%wrong: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i64
  %n = memref.load %wrong[%c0] : memref<1xi64>
  call @printI64(%n) : (i64) -> ()
  call @printNewline() : () -> ()
  memref.store %zero, %wrong[%c0] : memref<1xi64>
  return
}

// Fills `m` with its flat indices (as f32), then poisons `out` with -1.
func.func @prepare(%m: memref<?x?xf32>, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %minus = arith.constant -1.0 : f32
  %rows = memref.dim %m, %c0 : memref<?x?xf32>
  %cols = memref.dim %m, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %row = arith.muli %i, %cols : index
      %flat = arith.addi %row, %j : index
      %fi = arith.index_cast %flat : index to i64
      %f = arith.sitofp %fi : i64 to f32
      memref.store %f, %m[%i, %j] : memref<?x?xf32>
      memref.store %minus, %out[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// Fills `m` with its indices (as f32).
func.func @iota(%m: memref<2100010xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 2100010 : index
  scf.for %k = %c0 to %n step %c1 {
    %ki = arith.index_cast %k : index to i64
    %f = arith.sitofp %ki : i64 to f32
    memref.store %f, %m[%k] : memref<2100010xf32>
  }
  return
}

// CHECK: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
// CHECK-NEXT: 0
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %wrong = memref.alloc() : memref<1xi64>
  memref.store %zero, %wrong[%c0] : memref<1xi64>

  %in = memref.alloc() : memref<1100x1000xf32>
  %out = memref.alloc() : memref<1100x1000xf32>
  %in_d = memref.cast %in : memref<1100x1000xf32> to memref<?x?xf32>
  %out_d = memref.cast %out : memref<1100x1000xf32> to memref<?x?xf32>
  call @prepare(%in_d, %out_d) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  call @twice_plus_one(%in, %out) : (memref<1100x1000xf32>, memref<1100x1000xf32>) -> ()
  call @wrong_twice_plus_one(%out_d, %wrong) : (memref<?x?xf32>, memref<1xi64>) -> ()
  call @report(%wrong) : (memref<1xi64>) -> ()

  %sin = memref.alloc() : memref<37x29xf32>
  %sout = memref.alloc() : memref<37x29xf32>
  %sin_d = memref.cast %sin : memref<37x29xf32> to memref<?x?xf32>
  %sout_d = memref.cast %sout : memref<37x29xf32> to memref<?x?xf32>
  call @prepare(%sin_d, %sout_d) : (memref<?x?xf32>, memref<?x?xf32>) -> ()
  call @small(%sin, %sout) : (memref<37x29xf32>, memref<37x29xf32>) -> ()
  call @wrong_twice_plus_one(%sout_d, %wrong) : (memref<?x?xf32>, memref<1xi64>) -> ()
  call @report(%wrong) : (memref<1xi64>) -> ()

  // acc[k] = k and in[k] = k: after the kernel, acc[k] = 2k at k = 3, 5,
  // .., 2100001 and k elsewhere.
  %vin = memref.alloc() : memref<2100010xf32>
  %acc = memref.alloc() : memref<2100010xf32>
  call @iota(%vin) : (memref<2100010xf32>) -> ()
  call @iota(%acc) : (memref<2100010xf32>) -> ()
  call @add_in_place(%vin, %acc) : (memref<2100010xf32>, memref<2100010xf32>) -> ()
  %n = arith.constant 2100010 : index
  %lb = arith.constant 3 : index
  %ub = arith.constant 2100003 : index
  scf.for %k = %c0 to %n step %c1 {
    %ki = arith.index_cast %k : index to i64
    %f = arith.sitofp %ki : i64 to f32
    %twice = arith.addf %f, %f : f32
    %from = arith.cmpi uge, %k, %lb : index
    %below = arith.cmpi ult, %k, %ub : index
    %odd = arith.remui %k, %c2 : index
    %onStep = arith.cmpi eq, %odd, %c1 : index
    %r0 = arith.andi %from, %below : i1
    %run = arith.andi %r0, %onStep : i1
    %want = arith.select %run, %twice, %f : f32
    %v = memref.load %acc[%k] : memref<2100010xf32>
    %bad = arith.cmpf une, %v, %want : f32
    %inc = arith.select %bad, %one, %zero : i64
    %old = memref.load %wrong[%c0] : memref<1xi64>
    %new = arith.addi %old, %inc : i64
    memref.store %new, %wrong[%c0] : memref<1xi64>
  }
  call @report(%wrong) : (memref<1xi64>) -> ()

  // The input was only read.
  scf.for %k = %c0 to %n step %c1 {
    %ki = arith.index_cast %k : index to i64
    %f = arith.sitofp %ki : i64 to f32
    %v = memref.load %vin[%k] : memref<2100010xf32>
    %bad = arith.cmpf une, %v, %f : f32
    %inc = arith.select %bad, %one, %zero : i64
    %old = memref.load %wrong[%c0] : memref<1xi64>
    %new = arith.addi %old, %inc : i64
    memref.store %new, %wrong[%c0] : memref<1xi64>
  }
  call @report(%wrong) : (memref<1xi64>) -> ()
  memref.dealloc %in : memref<1100x1000xf32>
  memref.dealloc %out : memref<1100x1000xf32>
  memref.dealloc %sin : memref<37x29xf32>
  memref.dealloc %sout : memref<37x29xf32>
  memref.dealloc %vin : memref<2100010xf32>
  memref.dealloc %acc : memref<2100010xf32>
  memref.dealloc %wrong : memref<1xi64>
  return
}
