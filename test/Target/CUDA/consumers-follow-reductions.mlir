// RUN: sinter-opt %s -sinter-cuda-consumers-follow-reductions -split-input-file | FileCheck %s

// Cross-entropy's shape: the rows' statistics, the loss's sum over them,
// then the gradient that reads the statistics. The gradient moves to just
// after the statistics, with the empty tensor it writes; the loss's sum
// stays where it was, after them.
// CHECK-LABEL: func.func @gradient_after_statistics(
// CHECK:         %[[STATS:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           linalg.yield
// CHECK-NEXT:    } -> tensor<4xf32>
// CHECK-NEXT:    %[[EMPTY:.*]] = tensor.empty() : tensor<4x50xf32>
// CHECK-NEXT:    %[[GRAD:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%{{.*}}, %[[STATS]] : {{.*}}) outs(%[[EMPTY]]
// CHECK:         linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[STATS]]
// CHECK:         return
func.func @gradient_after_statistics(%x: tensor<4x50xf32>, %init: tensor<4xf32>, %z: tensor<f32>)
    -> (tensor<f32>, tensor<4x50xf32>) {
  %stats = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                           iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x50xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %acc, %v : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                          iterator_types = ["reduction"]}
      ins(%stats : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %empty = tensor.empty() : tensor<4x50xf32>
  %grad = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                           affine_map<(d0, d1) -> (d0, d1)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%x, %stats : tensor<4x50xf32>, tensor<4xf32>) outs(%empty : tensor<4x50xf32>) {
  ^bb0(%v: f32, %m: f32, %unused: f32):
    %d = arith.subf %v, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x50xf32>
  return %loss, %grad : tensor<f32>, tensor<4x50xf32>
}

// -----

// A call between them may touch memory: the reader stays after it.
// CHECK-LABEL: func.func @not_past_a_call(
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:           linalg.yield
// CHECK-NEXT:    } -> tensor<4xf32>
// CHECK-NEXT:    call @touch
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
func.func private @touch()
func.func @not_past_a_call(%x: tensor<4x50xf32>, %init: tensor<4xf32>) -> tensor<4x50xf32> {
  %stats = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                           iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x50xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %acc, %v : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  call @touch() : () -> ()
  %empty = tensor.empty() : tensor<4x50xf32>
  %grad = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                           affine_map<(d0, d1) -> (d0, d1)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%x, %stats : tensor<4x50xf32>, tensor<4xf32>) outs(%empty : tensor<4x50xf32>) {
  ^bb0(%v: f32, %m: f32, %unused: f32):
    %d = arith.subf %v, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x50xf32>
  return %grad : tensor<4x50xf32>
}
