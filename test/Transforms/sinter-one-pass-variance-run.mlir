// RUN: sinter-opt %s -sinter-one-pass-variance | FileCheck %s --check-prefix=ONEPASS
// RUN: sinter-opt %s -sinter-one-pass-variance \
// RUN:   | mlir-opt -one-shot-bufferize="bufferize-function-boundaries" -convert-linalg-to-loops \
// RUN:       -convert-math-to-llvm -expand-strided-metadata -lower-affine \
// RUN:       -convert-scf-to-cf -finalize-memref-to-llvm -convert-arith-to-llvm -convert-func-to-llvm \
// RUN:       -convert-cf-to-llvm -reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s

// The one-pass sum of squared deviations (lowered for the CPU) against the
// two-pass one, which the pass leaves alone here (its square multiplies
// two separate differences). Rows of 768: values from -30 to 30; 1000 plus
// steps of 0.01 (a mean far larger than the spread); one value repeated
// (no spread at all); 10000 plus or minus 1. Each row's sums must agree
// within 1e-5 relatively (plus 1e-9), with no NaN.
// ONEPASS-LABEL: func.func @main(
// ONEPASS:        arith.mulf %[[W:.*]], %[[W]] : f64

// The rows that differ.
// CHECK: {{^}}0{{$}}

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#vec = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>

func.func private @printI64(i64)
func.func private @printNewline()

func.func @input() -> tensor<4x768xf32> {
  %e = tensor.empty() : tensor<4x768xf32>
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x768xf32>) {
  ^bb0(%o: f32):
    %r = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c61 = arith.constant 61 : index
    %c7 = arith.constant 7 : index
    %c3 = arith.constant 3 : index
    %jm = arith.remui %j, %c61 : index
    %j7 = arith.remui %j, %c7 : index
    %j3 = arith.remui %j, %c3 : index
    %a = arith.index_cast %jm : index to i64
    %b = arith.index_cast %j7 : index to i64
    %c = arith.index_cast %j3 : index to i64
    %af = arith.sitofp %a : i64 to f32
    %bf = arith.sitofp %b : i64 to f32
    %cf = arith.sitofp %c : i64 to f32
    %thirty = arith.constant 30.0 : f32
    %v0 = arith.subf %af, %thirty : f32
    %hundredth = arith.constant 0.01 : f32
    %thousand = arith.constant 1000.0 : f32
    %s1 = arith.mulf %bf, %hundredth : f32
    %v1 = arith.addf %thousand, %s1 : f32
    %v2 = arith.constant 3.25 : f32
    %tenk = arith.constant 10000.0 : f32
    %one = arith.constant 1.0 : f32
    %d3 = arith.subf %cf, %one : f32
    %v3 = arith.addf %tenk, %d3 : f32
    %ri = arith.index_cast %r : index to i64
    %z = arith.constant 0 : i64
    %o1 = arith.constant 1 : i64
    %t2 = arith.constant 2 : i64
    %is0 = arith.cmpi eq, %ri, %z : i64
    %is1 = arith.cmpi eq, %ri, %o1 : i64
    %is2 = arith.cmpi eq, %ri, %t2 : i64
    %p2 = arith.select %is2, %v2, %v3 : f32
    %p1 = arith.select %is1, %v1, %p2 : f32
    %p0 = arith.select %is0, %v0, %p1 : f32
    linalg.yield %p0 : f32
  } -> tensor<4x768xf32>
  return %x : tensor<4x768xf32>
}

func.func @mean(%x: tensor<4x768xf32>, %init: tensor<4xf64>) -> tensor<4xf32> {
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x768xf32>) outs(%init : tensor<4xf64>) {
  ^bb0(%in: f32, %acc: f64):
    %w = arith.extf %in : f32 to f64
    %t = arith.addf %acc, %w : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  %em = tensor.empty() : tensor<4xf32>
  %mean = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%s : tensor<4xf64>) outs(%em : tensor<4xf32>) {
  ^bb0(%in: f64, %out: f32):
    %n = arith.constant 768.0 : f64
    %m = arith.divf %in, %n : f64
    %t = arith.truncf %m : f64 to f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  return %mean : tensor<4xf32>
}

func.func @main() {
  %x = call @input() : () -> tensor<4x768xf32>
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4xf64>
  %init = linalg.fill ins(%zero : f64) outs(%e : tensor<4xf64>) -> tensor<4xf64>
  %mean = call @mean(%x, %init) : (tensor<4x768xf32>, tensor<4xf64>) -> tensor<4xf32>
  %one = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mean : tensor<4x768xf32>, tensor<4xf32>) outs(%init : tensor<4xf64>) {
  ^bb0(%in: f32, %m: f32, %acc: f64):
    %d = arith.subf %in, %m : f32
    %sq = arith.mulf %d, %d : f32
    %w = arith.extf %sq : f32 to f64
    %t = arith.addf %acc, %w : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  %two = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %mean : tensor<4x768xf32>, tensor<4xf32>) outs(%init : tensor<4xf64>) {
  ^bb0(%in: f32, %m: f32, %acc: f64):
    %d = arith.subf %in, %m : f32
    %d2 = arith.subf %in, %m : f32
    %sq = arith.mulf %d, %d2 : f32
    %w = arith.extf %sq : f32 to f64
    %t = arith.addf %acc, %w : f64
    linalg.yield %t : f64
  } -> tensor<4xf64>
  %zi = arith.constant 0 : i64
  %ec = tensor.empty() : tensor<i64>
  %ci = linalg.fill ins(%zi : i64) outs(%ec : tensor<i64>) -> tensor<i64>
  %count = linalg.generic {indexing_maps = [#vec, #vec, #all], iterator_types = ["reduction"]}
      ins(%one, %two : tensor<4xf64>, tensor<4xf64>) outs(%ci : tensor<i64>) {
  ^bb0(%p: f64, %q: f64, %n: i64):
    %diff = arith.subf %p, %q : f64
    %adiff = math.absf %diff : f64
    %tol = arith.constant 1.0e-5 : f64
    %floor = arith.constant 1.0e-9 : f64
    %rel = arith.mulf %q, %tol : f64
    %bound = arith.addf %rel, %floor : f64
    // NaN compares false: a NaN counts as a difference.
    %close = arith.cmpf ole, %adiff, %bound : f64
    %true = arith.constant true
    %far = arith.xori %close, %true : i1
    %c = arith.extui %far : i1 to i64
    %r = arith.addi %n, %c : i64
    linalg.yield %r : i64
  } -> tensor<i64>
  %nd = tensor.extract %count[] : tensor<i64>
  call @printI64(%nd) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}
