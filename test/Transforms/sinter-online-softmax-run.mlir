// RUN: sinter-opt %s -sinter-online-softmax | FileCheck %s --check-prefix=MERGED
// RUN: sinter-opt %s -sinter-online-softmax \
// RUN:   | mlir-opt -one-shot-bufferize="bufferize-function-boundaries" -convert-linalg-to-loops \
// RUN:       -convert-math-to-llvm -convert-math-to-libm -expand-strided-metadata -lower-affine \
// RUN:       -convert-scf-to-cf -finalize-memref-to-llvm -convert-arith-to-llvm -convert-func-to-llvm \
// RUN:       -convert-cf-to-llvm -reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s

// The one-pass statistics run (lowered for the CPU), against the two
// passes over a copy of the same rows, which stay two. Rows of 300 values
// from -30 to 30, whose maximum moves often; a row of -inf but its last
// element; a row that starts with -inf. The maxima must be equal and the
// sums within 1e-6 of each other, relatively; no NaN.

// MERGED-COUNT-1: sinter.online_softmax

// The rows whose maximum differs, whose sum differs, then row 0's sum
// against the two passes' (their ratio, to 6 places) and row 2's sum (one
// element: exactly 1).
// CHECK:      {{^}}0{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}1{{$}}
// CHECK-NEXT: {{^}}1{{$}}

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#vec = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>

func.func private @printI64(i64)
func.func private @printF64(f64)
func.func private @printNewline()

// x[i, j] = 30 sin(7 j + i) (row 2: -inf but the last; row 3: -inf first).
func.func @input() -> tensor<4x300xf32> {
  %e = tensor.empty() : tensor<4x300xf32>
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x300xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c7 = arith.constant 7 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c0 = arith.constant 0 : index
    %c299 = arith.constant 299 : index
    %j7 = arith.muli %j, %c7 : index
    %k = arith.addi %j7, %i : index
    %ki = arith.index_cast %k : index to i64
    %kf = arith.sitofp %ki : i64 to f32
    %s = math.sin %kf : f32
    %thirty = arith.constant 30.0 : f32
    %v = arith.mulf %s, %thirty : f32
    %negInf = arith.constant 0xFF800000 : f32
    %row2 = arith.cmpi eq, %i, %c2 : index
    %notLast = arith.cmpi ne, %j, %c299 : index
    %masked2 = arith.andi %row2, %notLast : i1
    %row3 = arith.cmpi eq, %i, %c3 : index
    %first = arith.cmpi eq, %j, %c0 : index
    %masked3 = arith.andi %row3, %first : i1
    %masked = arith.ori %masked2, %masked3 : i1
    %r = arith.select %masked, %negInf, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x300xf32>
  return %x : tensor<4x300xf32>
}

// The row maxima (from -inf) and the f64 sums of exp(x - max) (from 0).
func.func @statistics(%x: tensor<4x300xf32>) -> (tensor<4xf32>, tensor<4xf64>) {
  %negInf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f64
  %em = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%negInf : f32) outs(%em : tensor<4xf32>) -> tensor<4xf32>
  %es = tensor.empty() : tensor<4xf64>
  %s0 = linalg.fill ins(%zero : f64) outs(%es : tensor<4xf64>) -> tensor<4xf64>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x300xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<4x300xf32>, tensor<4xf32>) outs(%s0 : tensor<4xf64>) {
  ^bb0(%v: f32, %mm: f32, %acc: f64):
    %d = arith.subf %v, %mm : f32
    %e = math.exp %d : f32
    %w = arith.extf %e : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  return %m, %s : tensor<4xf32>, tensor<4xf64>
}

// The same, the sum reading y (a copy of x): two passes.
func.func @twoPasses(%x: tensor<4x300xf32>, %y: tensor<4x300xf32>) -> (tensor<4xf32>, tensor<4xf64>) {
  %negInf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f64
  %em = tensor.empty() : tensor<4xf32>
  %m0 = linalg.fill ins(%negInf : f32) outs(%em : tensor<4xf32>) -> tensor<4xf32>
  %es = tensor.empty() : tensor<4xf64>
  %s0 = linalg.fill ins(%zero : f64) outs(%es : tensor<4xf64>) -> tensor<4xf64>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x300xf32>) outs(%m0 : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %r = arith.maximumf %acc, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y, %m : tensor<4x300xf32>, tensor<4xf32>) outs(%s0 : tensor<4xf64>) {
  ^bb0(%v: f32, %mm: f32, %acc: f64):
    %d = arith.subf %v, %mm : f32
    %e = math.exp %d : f32
    %w = arith.extf %e : f32 to f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  } -> tensor<4xf64>
  return %m, %s : tensor<4xf32>, tensor<4xf64>
}

func.func @main() {
  %x = call @input() : () -> tensor<4x300xf32>
  // A copy: the two passes read different tensors, so they stay two.
  %e = tensor.empty() : tensor<4x300xf32>
  %y = linalg.copy ins(%x : tensor<4x300xf32>) outs(%e : tensor<4x300xf32>) -> tensor<4x300xf32>
  %m1, %s1 = call @statistics(%x) : (tensor<4x300xf32>) -> (tensor<4xf32>, tensor<4xf64>)
  %m2, %s2 = call @twoPasses(%x, %y) : (tensor<4x300xf32>, tensor<4x300xf32>) -> (tensor<4xf32>, tensor<4xf64>)
  %zero = arith.constant 0 : i64
  %ec = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%zero : i64) outs(%ec : tensor<i64>) -> tensor<i64>
  %counts:2 = linalg.generic {indexing_maps = [#vec, #vec, #vec, #vec, #all, #all], iterator_types = ["reduction"]}
      ins(%m1, %m2, %s1, %s2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xf64>)
      outs(%init, %init : tensor<i64>, tensor<i64>) {
  ^bb0(%a: f32, %b: f32, %p: f64, %q: f64, %nm: i64, %ns: i64):
    %mdiff = arith.cmpf une, %a, %b : f32
    %diff = arith.subf %p, %q : f64
    %adiff = math.absf %diff : f64
    %tol = arith.constant 1.0e-6 : f64
    %bound = arith.mulf %q, %tol : f64
    // NaN compares false: a NaN counts as a difference.
    %close = arith.cmpf ole, %adiff, %bound : f64
    %true = arith.constant true
    %sdiff = arith.xori %close, %true : i1
    %one = arith.extui %mdiff : i1 to i64
    %two = arith.extui %sdiff : i1 to i64
    %r1 = arith.addi %nm, %one : i64
    %r2 = arith.addi %ns, %two : i64
    linalg.yield %r1, %r2 : i64, i64
  } -> (tensor<i64>, tensor<i64>)
  %nm = tensor.extract %counts#0[] : tensor<i64>
  %ns = tensor.extract %counts#1[] : tensor<i64>
  call @printI64(%nm) : (i64) -> ()
  call @printNewline() : () -> ()
  call @printI64(%ns) : (i64) -> ()
  call @printNewline() : () -> ()
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %a0 = tensor.extract %s1[%c0] : tensor<4xf64>
  %b0 = tensor.extract %s2[%c0] : tensor<4xf64>
  %ratio = arith.divf %a0, %b0 : f64
  %million = arith.constant 1.0e6 : f64
  %scaled = arith.mulf %ratio, %million : f64
  %rounded = math.round %scaled : f64
  %back = arith.divf %rounded, %million : f64
  call @printF64(%back) : (f64) -> ()
  call @printNewline() : () -> ()
  %a2 = tensor.extract %s1[%c2] : tensor<4xf64>
  call @printF64(%a2) : (f64) -> ()
  call @printNewline() : () -> ()
  return
}
