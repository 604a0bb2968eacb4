// RUN: sinter-opt %s -sinter-cuda-split-column-reductions | FileCheck %s --check-prefix=SPLIT
// RUN: sinter-opt %s -sinter-cuda-split-column-reductions \
// RUN:   | mlir-opt -one-shot-bufferize="bufferize-function-boundaries" -convert-linalg-to-loops \
// RUN:       -expand-strided-metadata -lower-affine -convert-scf-to-cf -finalize-memref-to-llvm \
// RUN:       -convert-arith-to-llvm -convert-func-to-llvm -convert-cf-to-llvm -reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN:   | FileCheck %s

// The split reductions run (lowered for the CPU here), against the same
// reductions read through a transposed copy, which stay whole. The values
// are small integers, so every order of the sum is exact: any element that
// differs is a wrong index, a row folded twice or not at all, or an
// accumulator's old value folded once per chunk.

// SPLIT-LABEL:   func.func @main(
// SPLIT-COUNT-3: tensor.expand_shape {{.*}} into tensor<4x256x8x64xf32>
// SPLIT-NOT:     tensor.expand_shape
// SPLIT:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<4x256x8x64xf32>) outs(%{{.*}}, %{{.*}} : tensor<4x256x8x64xf32>, tensor<256x64xf32>)

// A column product of signs (+1 or -1, every order exact): the partials
// take the identity, 1, at their chunk's first row, whatever their
// unfilled tensor held; were it taken from memory (often 0), the products
// would be 0.
// SPLIT-LABEL:   func.func @sign_products(
// SPLIT:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// SPLIT:           arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// SPLIT:           arith.mulf

// A sibling loop that reads the summed argument (its rounding for the
// matmuls) joins the partial sum, which writes its result.
// SPLIT-LABEL:   func.func @sibling(
// SPLIT:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<4x256x8x64xf32>) outs(%{{.*}}, %{{.*}} : tensor<4x256x8x64xf32>, tensor<256x64xf32>)
// SPLIT-NOT:     iterator_types = ["parallel", "parallel", "parallel"]

// A loop that reads a row's value at a unit dimension ([rows, 1]), and
// whose result flows on past the sum, joins the partial sum, which writes
// that result for the loop after it.
// SPLIT-LABEL:   func.func @flows_on(
// SPLIT:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<4x256x8x64xf32>, tensor<4x256x8x1xf32>) outs(%{{.*}}, %{{.*}} : tensor<4x256x8x64xf32>, tensor<256x64xf32>)
// SPLIT:         tensor.collapse_shape
// SPLIT:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
// SPLIT:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]}

// The sums of g that differ and the elements of y that differ (g's loop
// taken into its partial sum), the sums that differ, the maxima that
// differ, then column 0's sum and maximum; then the sibling's sums and
// elements that differ, the flowing-on loop's sums and elements, and the
// sign products that differ.
// CHECK:      {{^}}0{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}101{{$}}
// CHECK-NEXT: {{^}}8{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}0{{$}}
// CHECK-NEXT: {{^}}0{{$}}

#rows = affine_map<(c, b, t) -> (b, t, c)>
#byRow = affine_map<(c, b, t) -> (c, b, t)>
#column = affine_map<(c, b, t) -> (c)>
#id3 = affine_map<(b, t, c) -> (b, t, c)>
#id1 = affine_map<(c) -> (c)>
#all = affine_map<(c) -> ()>

func.func private @printI64(i64)
func.func private @printF32(f32)
func.func private @printNewline()

// x[b, t, c] = ((131 b + 31 t + 7 c) mod 17) - 8
func.func @input() -> tensor<4x2048x64xf32> {
  %e = tensor.empty() : tensor<4x2048x64xf32>
  %x = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%e : tensor<4x2048x64xf32>) {
  ^bb0(%o: f32):
    %b = linalg.index 0 : index
    %t = linalg.index 1 : index
    %c = linalg.index 2 : index
    %c131 = arith.constant 131 : index
    %c31 = arith.constant 31 : index
    %c7 = arith.constant 7 : index
    %c17 = arith.constant 17 : index
    %c8 = arith.constant 8 : index
    %bb = arith.muli %b, %c131 : index
    %tt = arith.muli %t, %c31 : index
    %cc = arith.muli %c, %c7 : index
    %s0 = arith.addi %bb, %tt : index
    %s1 = arith.addi %s0, %cc : index
    %m = arith.remui %s1, %c17 : index
    %v = arith.subi %m, %c8 : index
    %i = arith.index_cast %v : index to i64
    %f = arith.sitofp %i : i64 to f32
    linalg.yield %f : f32
  } -> tensor<4x2048x64xf32>
  return %x : tensor<4x2048x64xf32>
}

func.func @filled(%v: f32) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%v : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  return %f : tensor<64xf32>
}

// Column sums folded into an accumulator that already holds 100, and
// column maxima from -inf: split (read down the columns of x) and whole
// (read along the rows of its transposed copy).
func.func @main() {
  %x = call @input() : () -> tensor<4x2048x64xf32>
  %et = tensor.empty() : tensor<64x4x2048xf32>
  %xt = linalg.transpose ins(%x : tensor<4x2048x64xf32>) outs(%et : tensor<64x4x2048xf32>)
      permutation = [2, 0, 1]
  %hundred = arith.constant 100.0 : f32
  %neginf = arith.constant 0xFF800000 : f32
  %acc = call @filled(%hundred) : (f32) -> tensor<64xf32>
  %low = call @filled(%neginf) : (f32) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #column], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<4x2048x64xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %max = linalg.generic {indexing_maps = [#rows, #column], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<4x2048x64xf32>) outs(%low : tensor<64xf32>) {
  ^bb0(%in: f32, %a: f32):
    %m = arith.maximumf %in, %a : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %wholeSum = linalg.generic {indexing_maps = [#byRow, #column], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%xt : tensor<64x4x2048xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %wholeMax = linalg.generic {indexing_maps = [#byRow, #column], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%xt : tensor<64x4x2048xf32>) outs(%low : tensor<64xf32>) {
  ^bb0(%in: f32, %a: f32):
    %m = arith.maximumf %in, %a : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  // g = x^2 - 3, with y = g + 1 beside it: the split sum of g takes the
  // loop in and writes y from inside it; compared with g summed whole and
  // with y made on its own.
  %eg = tensor.empty() : tensor<4x2048x64xf32>
  %g:2 = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x2048x64xf32>) outs(%eg, %eg : tensor<4x2048x64xf32>, tensor<4x2048x64xf32>) {
  ^bb0(%in: f32, %o: f32, %p: f32):
    %sq = arith.mulf %in, %in : f32
    %three = arith.constant 3.0 : f32
    %gv = arith.subf %sq, %three : f32
    %one = arith.constant 1.0 : f32
    %yv = arith.addf %gv, %one : f32
    linalg.yield %gv, %yv : f32, f32
  } -> (tensor<4x2048x64xf32>, tensor<4x2048x64xf32>)
  %gSum = linalg.generic {indexing_maps = [#rows, #column], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%g#0 : tensor<4x2048x64xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %wholeG = linalg.generic {indexing_maps = [#byRow, #column], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%xt : tensor<64x4x2048xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: f32, %a: f32):
    %sq = arith.mulf %in, %in : f32
    %three = arith.constant 3.0 : f32
    %gv = arith.subf %sq, %three : f32
    %s = arith.addf %a, %gv : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %ey = tensor.empty() : tensor<4x2048x64xf32>
  %y = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x2048x64xf32>) outs(%ey : tensor<4x2048x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %sq = arith.mulf %in, %in : f32
    %two = arith.constant 2.0 : f32
    %yv = arith.subf %sq, %two : f32
    linalg.yield %yv : f32
  } -> tensor<4x2048x64xf32>
  %flatY = tensor.collapse_shape %g#1 [[0, 1, 2]] : tensor<4x2048x64xf32> into tensor<524288xf32>
  %flatWant = tensor.collapse_shape %y [[0, 1, 2]] : tensor<4x2048x64xf32> into tensor<524288xf32>
  %gWrong = call @mismatches(%gSum, %wholeG) : (tensor<64xf32>, tensor<64xf32>) -> i64
  %yWrong = call @mismatchesLong(%flatY, %flatWant) : (tensor<524288xf32>, tensor<524288xf32>) -> i64
  call @printI64(%gWrong) : (i64) -> ()
  call @printNewline() : () -> ()
  call @printI64(%yWrong) : (i64) -> ()
  call @printNewline() : () -> ()
  %sumWrong = call @mismatches(%sum, %wholeSum) : (tensor<64xf32>, tensor<64xf32>) -> i64
  %maxWrong = call @mismatches(%max, %wholeMax) : (tensor<64xf32>, tensor<64xf32>) -> i64
  call @printI64(%sumWrong) : (i64) -> ()
  call @printNewline() : () -> ()
  call @printI64(%maxWrong) : (i64) -> ()
  call @printNewline() : () -> ()
  %c0 = arith.constant 0 : index
  %s0 = tensor.extract %sum[%c0] : tensor<64xf32>
  %m0 = tensor.extract %max[%c0] : tensor<64xf32>
  call @printF32(%s0) : (f32) -> ()
  call @printNewline() : () -> ()
  call @printF32(%m0) : (f32) -> ()
  call @printNewline() : () -> ()

  // The sibling: 2x + 1 beside the sum of x.
  %sib:2 = call @sibling(%x, %acc) : (tensor<4x2048x64xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<4x2048x64xf32>)
  %ew = tensor.empty() : tensor<4x2048x64xf32>
  %want = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x2048x64xf32>) outs(%ew : tensor<4x2048x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %one = arith.constant 1.0 : f32
    %d = arith.mulf %in, %two : f32
    %v = arith.addf %d, %one : f32
    linalg.yield %v : f32
  } -> tensor<4x2048x64xf32>
  %sibSumWrong = call @mismatches(%sib#0, %wholeSum) : (tensor<64xf32>, tensor<64xf32>) -> i64
  %flatSib = tensor.collapse_shape %sib#1 [[0, 1, 2]] : tensor<4x2048x64xf32> into tensor<524288xf32>
  %flatSibWant = tensor.collapse_shape %want [[0, 1, 2]] : tensor<4x2048x64xf32> into tensor<524288xf32>
  %sibWrong = call @mismatchesLong(%flatSib, %flatSibWant) : (tensor<524288xf32>, tensor<524288xf32>) -> i64
  call @printI64(%sibSumWrong) : (i64) -> ()
  call @printNewline() : () -> ()
  call @printI64(%sibWrong) : (i64) -> ()
  call @printNewline() : () -> ()

  // Flowing on: g = x - m with m = 1 for every row, summed by columns, and
  // 3 g after the sum; against the sum of x less each column's row count
  // and 3 (x - 1) made on its own.
  %em = tensor.empty() : tensor<4x2048x1xf32>
  %onef = arith.constant 1.0 : f32
  %m = linalg.fill ins(%onef : f32) outs(%em : tensor<4x2048x1xf32>) -> tensor<4x2048x1xf32>
  %flow:2 = call @flows_on(%x, %m, %acc) : (tensor<4x2048x64xf32>, tensor<4x2048x1xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<4x2048x64xf32>)
  %rowsF = arith.constant 8192.0 : f32
  %e64 = tensor.empty() : tensor<64xf32>
  %flowSumWant = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%wholeSum : tensor<64xf32>) outs(%e64 : tensor<64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %v = arith.subf %in, %rowsF : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %flowWant = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x2048x64xf32>) outs(%ew : tensor<4x2048x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %three = arith.constant 3.0 : f32
    %d = arith.subf %in, %onef : f32
    %v = arith.mulf %d, %three : f32
    linalg.yield %v : f32
  } -> tensor<4x2048x64xf32>
  %flowSumWrong = call @mismatches(%flow#0, %flowSumWant) : (tensor<64xf32>, tensor<64xf32>) -> i64
  %flatFlow = tensor.collapse_shape %flow#1 [[0, 1, 2]] : tensor<4x2048x64xf32> into tensor<524288xf32>
  %flatFlowWant = tensor.collapse_shape %flowWant [[0, 1, 2]] : tensor<4x2048x64xf32> into tensor<524288xf32>
  %flowWrong = call @mismatchesLong(%flatFlow, %flatFlowWant) : (tensor<524288xf32>, tensor<524288xf32>) -> i64
  call @printI64(%flowSumWrong) : (i64) -> ()
  call @printNewline() : () -> ()
  call @printI64(%flowWrong) : (i64) -> ()
  call @printNewline() : () -> ()

  // Products of signs, split (down the columns of x) and whole (along the
  // rows of its transposed copy).
  %prod = call @sign_products(%x) : (tensor<4x2048x64xf32>) -> tensor<64xf32>
  %onesAcc = call @filled(%onef) : (f32) -> tensor<64xf32>
  %wholeProd = linalg.generic {indexing_maps = [#byRow, #column], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%xt : tensor<64x4x2048xf32>) outs(%onesAcc : tensor<64xf32>) {
  ^bb0(%in: f32, %a: f32):
    %zero = arith.constant 0.0 : f32
    %one = arith.constant 1.0 : f32
    %minus = arith.constant -1.0 : f32
    %neg = arith.cmpf olt, %in, %zero : f32
    %sign = arith.select %neg, %minus, %one : f32
    %p = arith.mulf %a, %sign : f32
    linalg.yield %p : f32
  } -> tensor<64xf32>
  %prodWrong = call @mismatches(%prod, %wholeProd) : (tensor<64xf32>, tensor<64xf32>) -> i64
  call @printI64(%prodWrong) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}

func.func @sign_products(%x: tensor<4x2048x64xf32>) -> tensor<64xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %ones = linalg.fill ins(%one : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %prod = linalg.generic {indexing_maps = [#rows, #column], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<4x2048x64xf32>) outs(%ones : tensor<64xf32>) {
  ^bb0(%in: f32, %a: f32):
    %zero = arith.constant 0.0 : f32
    %plus = arith.constant 1.0 : f32
    %minus = arith.constant -1.0 : f32
    %neg = arith.cmpf olt, %in, %zero : f32
    %sign = arith.select %neg, %minus, %plus : f32
    %p = arith.mulf %a, %sign : f32
    linalg.yield %p : f32
  } -> tensor<64xf32>
  return %prod : tensor<64xf32>
}

func.func @sibling(%x: tensor<4x2048x64xf32>, %acc: tensor<64xf32>) -> (tensor<64xf32>, tensor<4x2048x64xf32>) {
  %e = tensor.empty() : tensor<4x2048x64xf32>
  %y = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<4x2048x64xf32>) outs(%e : tensor<4x2048x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %one = arith.constant 1.0 : f32
    %d = arith.mulf %in, %two : f32
    %v = arith.addf %d, %one : f32
    linalg.yield %v : f32
  } -> tensor<4x2048x64xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #column], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : tensor<4x2048x64xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %sum, %y : tensor<64xf32>, tensor<4x2048x64xf32>
}

#unit = affine_map<(b, t, c) -> (b, t, 0)>
func.func @flows_on(%x: tensor<4x2048x64xf32>, %m: tensor<4x2048x1xf32>, %acc: tensor<64xf32>) -> (tensor<64xf32>, tensor<4x2048x64xf32>) {
  %e = tensor.empty() : tensor<4x2048x64xf32>
  %g = linalg.generic {indexing_maps = [#id3, #unit, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<4x2048x64xf32>, tensor<4x2048x1xf32>) outs(%e : tensor<4x2048x64xf32>) {
  ^bb0(%in: f32, %mv: f32, %o: f32):
    %v = arith.subf %in, %mv : f32
    linalg.yield %v : f32
  } -> tensor<4x2048x64xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #column], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%g : tensor<4x2048x64xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %z = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%g : tensor<4x2048x64xf32>) outs(%e : tensor<4x2048x64xf32>) {
  ^bb0(%in: f32, %o: f32):
    %three = arith.constant 3.0 : f32
    %v = arith.mulf %in, %three : f32
    linalg.yield %v : f32
  } -> tensor<4x2048x64xf32>
  return %sum, %z : tensor<64xf32>, tensor<4x2048x64xf32>
}

func.func @mismatches(%a: tensor<64xf32>, %b: tensor<64xf32>) -> i64 {
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%zero : i64) outs(%e : tensor<i64>) -> tensor<i64>
  %n = linalg.generic {indexing_maps = [#id1, #id1, #all], iterator_types = ["reduction"]}
      ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%init : tensor<i64>) {
  ^bb0(%p: f32, %q: f32, %acc: i64):
    %ne = arith.cmpf une, %p, %q : f32
    %one = arith.extui %ne : i1 to i64
    %s = arith.addi %acc, %one : i64
    linalg.yield %s : i64
  } -> tensor<i64>
  %r = tensor.extract %n[] : tensor<i64>
  return %r : i64
}

func.func @mismatchesLong(%a: tensor<524288xf32>, %b: tensor<524288xf32>) -> i64 {
  %zero = arith.constant 0 : i64
  %e = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%zero : i64) outs(%e : tensor<i64>) -> tensor<i64>
  %n = linalg.generic {indexing_maps = [#id1, #id1, #all], iterator_types = ["reduction"]}
      ins(%a, %b : tensor<524288xf32>, tensor<524288xf32>) outs(%init : tensor<i64>) {
  ^bb0(%p: f32, %q: f32, %acc: i64):
    %ne = arith.cmpf une, %p, %q : f32
    %one = arith.extui %ne : i1 to i64
    %s = arith.addi %acc, %one : i64
    linalg.yield %s : i64
  } -> tensor<i64>
  %r = tensor.extract %n[] : tensor<i64>
  return %r : i64
}
