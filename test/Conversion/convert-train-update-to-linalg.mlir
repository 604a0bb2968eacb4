// RUN: sinter-opt %s -convert-train-update-to-linalg | FileCheck %s

// Each update is one parallel generic whose outputs are the parameter and
// its moments (so bufferization writes them in place); the scalars are
// computed once in f64 and rounded to f32. The global norm is one f64
// reduction per gradient, each into its own sum, then the sums added in
// order, at most 16 in one generic.

// CHECK-LABEL: func.func @adamw(
// CHECK-SAME:    %[[P:[^:]*]]: tensor<4x3xf32>, %[[G:[^:]*]]: tensor<4x3xf32>, %[[M:[^:]*]]: tensor<4x3xf32>, %[[V:[^:]*]]: tensor<4x3xf32>
// CHECK:         math.powf
// CHECK:         math.powf
// CHECK:         arith.truncf {{.*}} : f64 to f32
// CHECK:         %[[R:.*]]:3 = linalg.generic
// CHECK-SAME:      iterator_types = ["parallel", "parallel"]
// CHECK-SAME:      ins(%[[G]] : tensor<4x3xf32>) outs(%[[P]], %[[M]], %[[V]] : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK:           math.sqrt {{.*}} : f32
// CHECK:           linalg.yield {{.*}} : f32, f32, f32
// CHECK:         return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @adamw(%p: tensor<4x3xf32>, %g: tensor<4x3xf32>, %m: tensor<4x3xf32>,
                 %v: tensor<4x3xf32>, %s: f64) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
  %p2, %m2, %v2 = train.adamw_update %p, %g, %m, %v lr(%s) weight_decay(%s)
      betas(%s, %s) eps(%s) step(%s) grad_scale(%s) : tensor<4x3xf32>
  return %p2, %m2, %v2 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func.func @sgd(
// CHECK-SAME:    %[[P:[^:]*]]: tensor<8xf32>, %[[G:[^:]*]]: tensor<8xf32>
// CHECK:         %[[R:.*]] = linalg.generic
// CHECK-SAME:      ins(%[[G]] : tensor<8xf32>) outs(%[[P]] : tensor<8xf32>)
// CHECK-NOT:       arith.select
// CHECK:           linalg.yield {{.*}} : f32
func.func @sgd(%p: tensor<8xf32>, %g: tensor<8xf32>, %s: f64) -> tensor<8xf32> {
  %p2 = train.sgd_update %p, %g lr(%s) weight_decay(%s) momentum(%s)
      nesterov(%s) grad_scale(%s) : tensor<8xf32>
  return %p2 : tensor<8xf32>
}

// With a momentum buffer, Nesterov's step is chosen at run time.
// CHECK-LABEL: func.func @momentum(
// CHECK-SAME:    %[[P:[^:]*]]: tensor<8xf32>, %[[G:[^:]*]]: tensor<8xf32>, %[[B:[^:]*]]: tensor<8xf32>
// CHECK:         %[[NESTEROV:.*]] = arith.cmpf one
// CHECK:         %[[R:.*]]:2 = linalg.generic
// CHECK-SAME:      ins(%[[G]] : tensor<8xf32>) outs(%[[P]], %[[B]] : tensor<8xf32>, tensor<8xf32>)
// CHECK:           arith.select %[[NESTEROV]]
// CHECK:           linalg.yield {{.*}} : f32, f32
func.func @momentum(%p: tensor<8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>,
                    %s: f64) -> (tensor<8xf32>, tensor<8xf32>) {
  %p2, %b2 = train.sgd_update %p, %g momentum_buffer(%b : tensor<8xf32>)
      lr(%s) weight_decay(%s) momentum(%s) nesterov(%s) grad_scale(%s)
      : tensor<8xf32>
  return %p2, %b2 : tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @norm(
// CHECK:         %[[ZA:.*]] = linalg.fill {{.*}} -> tensor<f64>
// CHECK:         %[[SA:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK-SAME:      ins(%{{.*}} : tensor<4x3xf32>) outs(%[[ZA]] : tensor<f64>)
// CHECK:           arith.extf {{.*}} : f32 to f64
// CHECK:         %[[ZB:.*]] = linalg.fill {{.*}} -> tensor<f64>
// CHECK:         %[[SB:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK-SAME:      ins(%{{.*}} : tensor<8xf32>) outs(%[[ZB]] : tensor<f64>)
// CHECK:         %[[S:.*]] = linalg.generic {{.*}} iterator_types = []
// CHECK-SAME:      ins(%[[SB]] : tensor<f64>) outs(%[[SA]] : tensor<f64>)
// CHECK:         %[[E:.*]] = tensor.extract %[[S]][]
// CHECK:         %[[N:.*]] = math.sqrt %[[E]] : f64
// CHECK:         return %[[N]]
func.func @norm(%a: tensor<4x3xf32>, %b: tensor<8xf32>) -> f64 {
  %n = train.global_norm %a, %b : tensor<4x3xf32>, tensor<8xf32>
  return %n : f64
}

// Eighteen sums: the first sixteen added in one generic, the last two in
// another, then those two.
// CHECK-LABEL: func.func @norm_tree(
// CHECK-COUNT-18: iterator_types = ["reduction"]
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} iterator_types = []
// CHECK-SAME:      ins({{(%[^,]*, ){14}%[^,]*}} : {{.*}}) outs(%{{[^ ]*}} : tensor<f64>)
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} iterator_types = []
// CHECK-SAME:      ins(%{{[^,]*}} : tensor<f64>) outs(%{{[^ ]*}} : tensor<f64>)
// CHECK:         linalg.generic {{.*}} iterator_types = []
// CHECK-SAME:      ins(%[[B]] : tensor<f64>) outs(%[[A]] : tensor<f64>)
// CHECK:         math.sqrt
func.func @norm_tree(%g0: tensor<2xf32>, %g1: tensor<2xf32>, %g2: tensor<2xf32>, %g3: tensor<2xf32>, %g4: tensor<2xf32>, %g5: tensor<2xf32>, %g6: tensor<2xf32>, %g7: tensor<2xf32>, %g8: tensor<2xf32>, %g9: tensor<2xf32>, %g10: tensor<2xf32>, %g11: tensor<2xf32>, %g12: tensor<2xf32>, %g13: tensor<2xf32>, %g14: tensor<2xf32>, %g15: tensor<2xf32>, %g16: tensor<2xf32>, %g17: tensor<2xf32>) -> f64 {
  %n = train.global_norm %g0, %g1, %g2, %g3, %g4, %g5, %g6, %g7, %g8, %g9, %g10, %g11, %g12, %g13, %g14, %g15, %g16, %g17 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  return %n : f64
}
