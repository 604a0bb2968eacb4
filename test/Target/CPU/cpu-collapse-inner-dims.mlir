// RUN: sinter-opt %s -sinter-cpu-collapse-inner-dims | FileCheck %s
// RUN: sinter-opt %s -sinter-cpu-collapse-inner-dims=min-parallel-iterations=4096 | FileCheck %s --check-prefix=MORE

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#chan = affine_map<(d0, d1, d2, d3) -> (d1)>

// The threads share n and c (32 x 64 >= 64 iterations); the image plane,
// contiguous in both 4-d operands and absent from the channel's, is one
// loop of 1024.
// CHECK-LABEL: func.func @elementwise(
// CHECK-DAG:     %[[X:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<32x64x32x32xf32> into memref<32x64x1024xf32>
// CHECK-DAG:     %[[Y:.*]] = memref.collapse_shape %arg2 {{\[}}[0], [1], [2, 3]] : memref<32x64x32x32xf32> into memref<32x64x1024xf32>
// CHECK:         linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel", "parallel"]
// CHECK-SAME:      ins(%[[X]], %arg1 : memref<32x64x1024xf32>, memref<64xf32>) outs(%[[Y]] : memref<32x64x1024xf32>)
// With 4096 iterations asked for the threads, they take n, c and h: only
// w is left inside, so nothing is collapsed.
// MORE-LABEL: func.func @elementwise(
// MORE-NOT:     memref.collapse_shape
// MORE:         return
func.func @elementwise(%x: memref<32x64x32x32xf32>, %b: memref<64xf32>, %y: memref<32x64x32x32xf32>) {
  linalg.generic {indexing_maps = [#id4, #chan, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : memref<32x64x32x32xf32>, memref<64xf32>) outs(%y : memref<32x64x32x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}

// Batch-norm's channel sums: c parallel, then n, h, w reduced. n and h are
// not adjacent in x (c lies between), so only h and w become one.
#x = affine_map<(c, n, h, w) -> (n, c, h, w)>
#o = affine_map<(c, n, h, w) -> (c)>
// CHECK-LABEL: func.func @channel_sums(
// CHECK:         %[[X:.*]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<32x64x32x32xf32> into memref<32x64x1024xf32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK-SAME:      ins(%[[X]] : memref<32x64x1024xf32>) outs(%arg1 : memref<64xf64>)
func.func @channel_sums(%x: memref<32x64x32x32xf32>, %s: memref<64xf64>) {
  linalg.generic {indexing_maps = [#x, #o], iterator_types = ["parallel", "reduction", "reduction", "reduction"]}
      ins(%x : memref<32x64x32x32xf32>) outs(%s : memref<64xf64>) {
  ^bb0(%a: f32, %acc: f64):
    %e = arith.extf %a : f32 to f64
    %r = arith.addf %acc, %e : f64
    linalg.yield %r : f64
  }
  return
}

// Left as they are: a transposed read (h and w swap, so no run is
// contiguous everywhere), ...
#hw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3, d2)>
// CHECK-LABEL: func.func @transposed(
// CHECK-NOT:     memref.collapse_shape
// CHECK:         return
func.func @transposed(%x: memref<32x64x32x32xf32>, %y: memref<32x64x32x32xf32>) {
  linalg.generic {indexing_maps = [#hw, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<32x64x32x32xf32>) outs(%y : memref<32x64x32x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// ... a map with constant results (a broadcast 1x64x1x1 operand), ...
#bcast = affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>
// CHECK-LABEL: func.func @constant_results(
// CHECK-NOT:     memref.collapse_shape
// CHECK:         return
func.func @constant_results(%x: memref<32x64x32x32xf32>, %b: memref<1x64x1x1xf32>, %y: memref<32x64x32x32xf32>) {
  linalg.generic {indexing_maps = [#id4, #bcast, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : memref<32x64x32x32xf32>, memref<1x64x1x1xf32>) outs(%y : memref<32x64x32x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.mulf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}

// ... a strided view, whose rows are not one after the other, ...
// CHECK-LABEL: func.func @strided_view(
// CHECK-NOT:     memref.collapse_shape
// CHECK:         return
func.func @strided_view(%x: memref<32x64x32x32xf32, strided<[131072, 1024, 64, 1]>>, %y: memref<32x64x32x32xf32>) {
  linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : memref<32x64x32x32xf32, strided<[131072, 1024, 64, 1]>>) outs(%y : memref<32x64x32x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// ... and tensors (not yet buffers).
// CHECK-LABEL: func.func @on_tensors(
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         return
func.func @on_tensors(%x: tensor<32x64x32x32xf32>, %y: tensor<32x64x32x32xf32>) -> tensor<32x64x32x32xf32> {
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<32x64x32x32xf32>) outs(%y : tensor<32x64x32x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<32x64x32x32xf32>
  return %r : tensor<32x64x32x32xf32>
}
