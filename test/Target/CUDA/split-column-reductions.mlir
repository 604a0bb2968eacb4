// RUN: sinter-opt %s -sinter-cuda-split-column-reductions -split-input-file | FileCheck %s

// GPT-2's bias gradient: 768 column sums over 16 x 1024 rows, in f64.
// 768 threads cannot fill a GPU, so the time loop (the longest evenly
// divisible one) is cut into 128 chunks of 8: 128 x 768 threads, each
// folding 16 x 8 rows from 0 into a partial (0 taken at the chunk's first
// row, so the partials need no fill of their own). The partials are then
// folded, chunk after chunk, into the output the generic folded into.
// CHECK-DAG:   #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d3, d1)>
// CHECK-DAG:   #[[PART:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
// CHECK-DAG:   #[[BYCHUNK:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG:   #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @bias_grad(
// CHECK-SAME:    %[[G:[a-z0-9]+]]: tensor<16x1024x768xf32>, %[[ACC:[a-z0-9]+]]: tensor<768xf64>)
// CHECK:       %[[CUT:.*]] = tensor.expand_shape %[[G]] {{\[}}[0], [1, 2], [3]] output_shape [16, 128, 8, 768] : tensor<16x1024x768xf32> into tensor<16x128x8x768xf32>
// CHECK:       %[[EMPTY:.*]] = tensor.empty() : tensor<128x768xf64>
// CHECK-NOT:   linalg.fill
// CHECK:       %[[P:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[PART]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:    ins(%[[CUT]] : tensor<16x128x8x768xf32>) outs(%[[EMPTY]] : tensor<128x768xf64>)
// CHECK:       ^bb0(%{{.*}}: f32, %[[OLD:.*]]: f64):
// CHECK:         %[[B:.*]] = linalg.index 2 : index
// CHECK:         %[[BFIRST:.*]] = arith.cmpi eq, %[[B]], %{{.*}} : index
// CHECK:         %[[T:.*]] = linalg.index 3 : index
// CHECK:         %[[TFIRST:.*]] = arith.cmpi eq, %[[T]], %{{.*}} : index
// CHECK:         %[[FIRST:.*]] = arith.andi %[[BFIRST]], %[[TFIRST]] : i1
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[START:.*]] = arith.select %[[FIRST]], %[[ZERO]], %[[OLD]] : f64
// CHECK:         arith.extf
// CHECK:         arith.addf %[[START]]
// CHECK:       %[[T:.*]] = linalg.generic {indexing_maps = [#[[BYCHUNK]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME:    ins(%[[P]] : tensor<128x768xf64>) outs(%[[ACC]] : tensor<768xf64>)
// CHECK:       ^bb0(%[[IN:.*]]: f64, %[[A:.*]]: f64):
// CHECK:         %[[S:.*]] = arith.addf %[[A]], %[[IN]] : f64
// CHECK:         linalg.yield %[[S]]
// CHECK:       return %[[T]]
func.func @bias_grad(%g: tensor<16x1024x768xf32>, %acc: tensor<768xf64>) -> tensor<768xf64> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0)>],
                       iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%g : tensor<16x1024x768xf32>) outs(%acc : tensor<768xf64>) {
  ^bb0(%in: f32, %a: f64):
    %w = arith.extf %in : f32 to f64
    %s = arith.addf %a, %w : f64
    linalg.yield %s : f64
  } -> tensor<768xf64>
  return %r : tensor<768xf64>
}

// -----

// A layer norm's scale gradient: the row-moving inputs are cut alike, a
// row's reciprocal deviation (one element for all columns) too; the mean
// (read per column) is not; 3072 columns over 512 rows take 16 chunks
// (a chunk keeps 32 rows). A maximum
// starts its partials from -inf, and the accumulator may be the combiner's
// second operand.
// CHECK-LABEL: func.func @scale_grad(
// CHECK-COUNT-2: tensor.expand_shape {{.*}} output_shape [16, 32, 3072] : tensor<512x3072xf32> into tensor<16x32x3072xf32>
// CHECK:       tensor.expand_shape {{.*}} output_shape [16, 32, 1] : tensor<512x1xf32> into tensor<16x32x1xf32>
// CHECK:       linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:    ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x32x3072xf32>, tensor<16x32x3072xf32>, tensor<3072xf32>, tensor<16x32x1xf32>) outs(%{{.*}} : tensor<16x3072xf32>)
// CHECK-LABEL: func.func @column_max(
// CHECK:       linalg.generic
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         arith.select %{{.*}}, %[[NEGINF]], %{{.*}} : f32
// CHECK:       linalg.generic
// CHECK:       ^bb0(%[[IN:.*]]: f32, %[[A:.*]]: f32):
// CHECK:         arith.maximumf %[[IN]], %[[A]] : f32
func.func @scale_grad(%dy: tensor<512x3072xf32>, %x: tensor<512x3072xf32>, %mean: tensor<3072xf32>,
                      %rstd: tensor<512x1xf32>, %acc: tensor<3072xf32>) -> tensor<3072xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1, d0)>,
                                        affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1, 0)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%dy, %x, %mean, %rstd : tensor<512x3072xf32>, tensor<512x3072xf32>, tensor<3072xf32>, tensor<512x1xf32>)
      outs(%acc : tensor<3072xf32>) {
  ^bb0(%d: f32, %v: f32, %m: f32, %r: f32, %a: f32):
    %c0 = arith.subf %v, %m : f32
    %c = arith.mulf %c0, %r : f32
    %p = arith.mulf %d, %c : f32
    %s = arith.addf %a, %p : f32
    linalg.yield %s : f32
  } -> tensor<3072xf32>
  return %r : tensor<3072xf32>
}
func.func @column_max(%x: tensor<512x3072xf32>, %acc: tensor<3072xf32>) -> tensor<3072xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<512x3072xf32>) outs(%acc : tensor<3072xf32>) {
  ^bb0(%in: f32, %a: f32):
    %m = arith.maximumf %in, %a : f32
    linalg.yield %m : f32
  } -> tensor<3072xf32>
  return %r : tensor<3072xf32>
}

// -----

// What stays whole: a row sum (its rows are contiguous); columns enough to
// fill the GPU alone (65536, under 4 chunks); too few rows (32: a chunk
// would be under 32 rows); a prime count of rows (1031); a loop read by
// the index of its iteration; reductions before the parallel loops.
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:   tensor.expand_shape
// CHECK-COUNT-6: linalg.generic
// CHECK-NOT:   linalg.generic
func.func @stays(%rows: tensor<768x1024xf32>, %wide: tensor<64x65536xf32>, %columns: tensor<1024x768xf32>, %short: tensor<32x768xf32>,
                 %prime: tensor<1031x768xf32>, %grid: tensor<32x32x768xf32>, %acc: tensor<768xf32>, %wacc: tensor<65536xf32>)
    -> (tensor<768xf32>, tensor<65536xf32>, tensor<768xf32>, tensor<768xf32>, tensor<768xf32>,
        tensor<768xf32>) {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%rows : tensor<768x1024xf32>) outs(%acc : tensor<768xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<768xf32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%wide : tensor<64x65536xf32>) outs(%wacc : tensor<65536xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<65536xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%short : tensor<32x768xf32>) outs(%acc : tensor<768xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<768xf32>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%prime : tensor<1031x768xf32>) outs(%acc : tensor<768xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<768xf32>
  %4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0)>],
                       iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%grid : tensor<32x32x768xf32>) outs(%acc : tensor<768xf32>) {
  ^bb0(%in: f32, %a: f32):
    %t = linalg.index 1 : index
    %ti = arith.index_cast %t : index to i32
    %tf = arith.sitofp %ti : i32 to f32
    %v = arith.mulf %in, %tf : f32
    %s = arith.addf %a, %v : f32
    linalg.yield %s : f32
  } -> tensor<768xf32>
  %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%columns : tensor<1024x768xf32>) outs(%acc : tensor<768xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<768xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<768xf32>, tensor<65536xf32>, tensor<768xf32>, tensor<768xf32>,
                                   tensor<768xf32>, tensor<768xf32>
}

// -----

// A gradient computed by an elementwise loop (dy times a function of h),
// which also writes it in bf16 for a later matmul, and whose f32 values only
// the bias gradient sums. The loop is cut into chunks as the sum's input
// is and taken into the partial: the partial reads dy and h, writes the
// bf16 gradient at each element it visits (collapsed back for its reader),
// and the f32 gradient is never made.
// CHECK-LABEL: func.func @fused_producer(
// CHECK-SAME:    %[[DY:[a-z0-9]+]]: tensor<16x1024x768xf32>, %[[H:[a-z0-9]+]]: tensor<16x1024x768xf32>
// CHECK-DAG:     %[[CDY:.*]] = tensor.expand_shape %[[DY]] {{.*}} into tensor<16x128x8x768xf32>
// CHECK-DAG:     %[[CH:.*]] = tensor.expand_shape %[[H]] {{.*}} into tensor<16x128x8x768xf32>
// CHECK:         %[[P:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME:      ins(%[[CDY]], %[[CH]] : tensor<16x128x8x768xf32>, tensor<16x128x8x768xf32>)
// CHECK-SAME:      outs(%{{.*}}, %{{.*}} : tensor<16x128x8x768xbf16>, tensor<128x768xf64>)
// CHECK:           math.tanh
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]
// CHECK:         %[[BF:.*]] = tensor.collapse_shape %[[P]]#0 {{\[}}[0], [1, 2], [3]] : tensor<16x128x8x768xbf16> into tensor<16x1024x768xbf16>
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[P]]#1 : tensor<128x768xf64>)
// CHECK:         %[[USE:.*]] = linalg.generic {{.*}} ins(%[[BF]] : tensor<16x1024x768xbf16>)
// CHECK:         return %[[SUM]], %[[USE]]
#id3 = affine_map<(a, b, c) -> (a, b, c)>
func.func @fused_producer(%dy: tensor<16x1024x768xf32>, %h: tensor<16x1024x768xf32>,
                          %acc: tensor<768xf64>) -> (tensor<768xf64>, tensor<16x1024x768xf32>) {
  %e = tensor.empty() : tensor<16x1024x768xf32>
  %eb = tensor.empty() : tensor<16x1024x768xbf16>
  %g:2 = linalg.generic {indexing_maps = [#id3, #id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%dy, %h : tensor<16x1024x768xf32>, tensor<16x1024x768xf32>) outs(%e, %eb : tensor<16x1024x768xf32>, tensor<16x1024x768xbf16>) {
  ^bb0(%d: f32, %x: f32, %o: f32, %ob: bf16):
    %t = math.tanh %x : f32
    %m = arith.mulf %d, %t : f32
    %r = arith.truncf %m : f32 to bf16
    linalg.yield %m, %r : f32, bf16
  } -> (tensor<16x1024x768xf32>, tensor<16x1024x768xbf16>)
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0)>],
                         iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%g#0 : tensor<16x1024x768xf32>) outs(%acc : tensor<768xf64>) {
  ^bb0(%in: f32, %a: f64):
    %w = arith.extf %in : f32 to f64
    %s = arith.addf %a, %w : f64
    linalg.yield %s : f64
  } -> tensor<768xf64>
  %use = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%g#1 : tensor<16x1024x768xbf16>) outs(%e : tensor<16x1024x768xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %w = arith.extf %in : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<16x1024x768xf32>
  return %sum, %use : tensor<768xf64>, tensor<16x1024x768xf32>
}

// -----

// A loop that reads column 0 of a full tensor (a map's constant 0 on a
// dimension of 64) is not cut like a [rows, 1] value: it stays outside
// the partial sums.
// CHECK-LABEL: func.func @column_zero(
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<4x256x8x64xf32>)
func.func @column_zero(%x: tensor<4x2048x64xf32>, %m: tensor<4x2048x64xf32>, %acc: tensor<64xf32>) -> (tensor<64xf32>, tensor<4x2048x64xf32>) {
  %e = tensor.empty() : tensor<4x2048x64xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(b, t, c) -> (b, t, c)>, affine_map<(b, t, c) -> (b, t, 0)>, affine_map<(b, t, c) -> (b, t, c)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %m : tensor<4x2048x64xf32>, tensor<4x2048x64xf32>) outs(%e : tensor<4x2048x64xf32>) {
  ^bb0(%in: f32, %mv: f32, %o: f32):
    %v = arith.subf %in, %mv : f32
    linalg.yield %v : f32
  } -> tensor<4x2048x64xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(c, b, t) -> (b, t, c)>, affine_map<(c, b, t) -> (c)>], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%g : tensor<4x2048x64xf32>) outs(%acc : tensor<64xf32>) {
  ^bb0(%in: f32, %a: f32):
    %s = arith.addf %a, %in : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %sum, %g : tensor<64xf32>, tensor<4x2048x64xf32>
}

// -----

// A scale gradient that reads a row's statistic as [rows] (its unit
// dimension read through, sinter-fuse-elementwise): the statistic is one
// element for all the columns a warp sums, so the sum is still a column
// sum, and is split.
// CHECK-LABEL: func.func @row_statistic_as_rows(
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:    ins(%{{.*}}, %{{.*}} : tensor<16x32x3072xf32>, tensor<16x32xf32>)
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]}
func.func @row_statistic_as_rows(%dy: tensor<512x3072xf32>, %rstd: tensor<512xf32>, %acc: tensor<3072xf32>) -> tensor<3072xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d1)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%dy, %rstd : tensor<512x3072xf32>, tensor<512xf32>) outs(%acc : tensor<3072xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3072xf32>
  return %r : tensor<3072xf32>
}
