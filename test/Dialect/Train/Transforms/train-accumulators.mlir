// RUN: sinter-opt %s -train-accumulate -canonicalize -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -canonicalize -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" -sinter-plan-memory -sinter-runtime-calls -canonicalize | FileCheck %s

// Where the accumulators live: after bufferization the loss and gradient
// accumulators are the step's own output buffers (the runtime's LOSS and
// GRADIENT buffers), zeroed once before the loop and added to in place in
// each iteration, with no copy at the end. One micro-batch's intermediates
// (its own gradient before it is added) share an arena carved out of the
// step's workspace for the loop's body. The runtime is asked for k, for each
// micro-batch's inputs, and told when the gradients are final.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: memref<4x3xf32> {sinter.input = "x"}, %{{.*}}: memref<3xf32> {sinter.param = "w"},
// CHECK-SAME:    %[[LOSS:[a-z0-9]+]]: memref<f32> {sinter.loss = "loss"}, %[[GRAD:[a-z0-9]+]]: memref<3xf32> {sinter.gradient = "w"},
// CHECK-SAME:    %[[WS:[a-z0-9]+]]: memref<{{[0-9]+}}xi8> {sinter.workspace})
// CHECK:       %[[K:.*]] = call @sinter_rt_micro_batch_count() : () -> i64
// CHECK:       linalg.fill ins(%{{.*}} : f32) outs(%[[LOSS]] : memref<f32>)
// CHECK:       linalg.fill ins(%{{.*}} : f32) outs(%[[GRAD]] : memref<3xf32>)
// CHECK:       scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK:         %[[PTR:.*]] = llvm.inttoptr
// CHECK:         call @sinter_rt_load_input(%[[PTR]], %{{.*}}) : (!llvm.ptr, i64) -> ()
// CHECK:         %[[G:.*]] = memref.view %[[WS]]
// CHECK:         linalg.generic {{.*}} ins(%[[X]] : memref<4x3xf32>) outs(%[[G]] : memref<3xf32>)
// CHECK:         linalg.generic {{.*}} outs(%[[LOSS]] : memref<f32>)
// CHECK:         linalg.generic {{.*}} ins(%[[G]] : memref<3xf32>) outs(%[[GRAD]] : memref<3xf32>)
// CHECK-NOT:     sinter_rt_gradients_ready
// CHECK:       call @sinter_rt_gradients_ready() : () -> ()
// CHECK-NEXT:  return
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#all = affine_map<(d0, d1) -> ()>
func.func @step(%x: tensor<4x3xf32> {sinter.input = "x"}, %w: tensor<3xf32> {sinter.param = "w"})
    -> (tensor<f32> {sinter.loss = "loss"}, tensor<3xf32> {sinter.gradient = "w"})
    attributes {sinter.phase = "train"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %g = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<4x3xf32>) outs(%z : tensor<3xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  %es = tensor.empty() : tensor<f32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<4x3xf32>) outs(%zs : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l, %g : tensor<f32>, tensor<3xf32>
}
