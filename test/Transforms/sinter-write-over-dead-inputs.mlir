// RUN: sinter-opt %s -sinter-write-over-dead-inputs -split-input-file | FileCheck %s

// Cross-entropy's gradient over the logits: the loop writes into the
// logits (a product the step made). The loss, after the loop, picks each
// target's logit by the index its targets give: those picks are made
// before the loop, into a tensor the loss then reads, and the loss stays
// where it was.
// CHECK-LABEL: func.func @logits_gradient(
// CHECK:       %[[L:.*]] = linalg.matmul
// CHECK:       %[[E:.*]] = tensor.expand_shape %[[L]]
// CHECK:       %[[PICKS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%arg3 : tensor<2x4xindex>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         tensor.extract %[[E]]
// CHECK:       %[[D:.*]] = linalg.generic {{.*}} ins(%[[E]], %{{.*}} : tensor<2x4x5xf32>, tensor<2x4xf32>) outs(%[[E]] : tensor<2x4x5xf32>)
// CHECK:       %[[LOSS:.*]] = linalg.generic {{.*}} ins(%arg3, %[[PICKS]] : tensor<2x4xindex>, tensor<2x4xf32>)
// CHECK-NOT:     tensor.extract
// CHECK:       return %[[D]], %[[LOSS]]
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id3 = affine_map<(i, j, l) -> (i, j, l)>
#row = affine_map<(i, j, l) -> (i, j)>
#id2 = affine_map<(i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>
func.func @logits_gradient(%h: tensor<8x3xf32>, %w: tensor<5x3xf32>, %m: tensor<2x4xf32>, %t: tensor<2x4xindex>) -> (tensor<2x4x5xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x5xf32>) -> tensor<8x5xf32>
  %l = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%h, %w : tensor<8x3xf32>, tensor<5x3xf32>) outs(%z : tensor<8x5xf32>) -> tensor<8x5xf32>
  %l3 = tensor.expand_shape %l [[0, 1], [2]] output_shape [2, 4, 5] : tensor<8x5xf32> into tensor<2x4x5xf32>
  %o = tensor.empty() : tensor<2x4x5xf32>
  %d = linalg.generic {indexing_maps = [#id3, #row, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%l3, %m : tensor<2x4x5xf32>, tensor<2x4xf32>) outs(%o : tensor<2x4x5xf32>) {
  ^bb0(%x: f32, %mx: f32, %out: f32):
    %s = arith.subf %x, %mx : f32
    %y = math.exp %s : f32
    linalg.yield %y : f32
  } -> tensor<2x4x5xf32>
  %se = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id2, #scalar], iterator_types = ["reduction", "reduction"]}
      ins(%t : tensor<2x4xindex>) outs(%s0 : tensor<f32>) {
  ^bb0(%ti: index, %acc: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %picked = tensor.extract %l3[%i, %j, %ti] : tensor<2x4x5xf32>
    %sum = arith.addf %acc, %picked : f32
    linalg.yield %sum : f32
  } -> tensor<f32>
  return %d, %loss : tensor<2x4x5xf32>, tensor<f32>
}

// -----

// Not over an input read after the loop by what needs the loop's result
// (the first loop's result, read by the last); the last loop, the input's
// final reader, writes over it. Not over a function's argument (a buffer
// the step does not own).
// CHECK-LABEL: func.func @kept(
// CHECK:       %[[P:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x5xf32>) outs(%{{.*}} : tensor<4x5xf32>)
// CHECK:       %[[E:.*]] = tensor.empty() : tensor<4x5xf32>
// CHECK:       %[[Q:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<4x5xf32>) outs(%[[E]] : tensor<4x5xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[P]], %[[Q]] : tensor<4x5xf32>, tensor<4x5xf32>) outs(%[[P]] : tensor<4x5xf32>)
// CHECK-LABEL: func.func @argument(
// CHECK:       %[[O:.*]] = tensor.empty() : tensor<4x5xf32>
// CHECK:       linalg.generic {{.*}} outs(%[[O]] : tensor<4x5xf32>)
#id = affine_map<(i, j) -> (i, j)>
func.func @kept(%x: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %e = tensor.empty() : tensor<4x5xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<4x5xf32>
  %o = tensor.empty() : tensor<4x5xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x5xf32>) outs(%o : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.tanh %in : f32
    linalg.yield %y : f32
  } -> tensor<4x5xf32>
  %o2 = tensor.empty() : tensor<4x5xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %q : tensor<4x5xf32>, tensor<4x5xf32>) outs(%o2 : tensor<4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %y = arith.addf %a, %b : f32
    linalg.yield %y : f32
  } -> tensor<4x5xf32>
  return %q, %r : tensor<4x5xf32>, tensor<4x5xf32>
}
func.func @argument(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %o = tensor.empty() : tensor<4x5xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x5xf32>) outs(%o : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.tanh %in : f32
    linalg.yield %y : f32
  } -> tensor<4x5xf32>
  return %q : tensor<4x5xf32>
}

// -----

// A later reader that takes the input whole (a sum of it) and needs nothing
// the loop makes moves before the loop, with the zeros it starts from.
// CHECK-LABEL: func.func @moved_reader(
// CHECK:       %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x5xf32>)
// CHECK:       %[[Z:.*]] = linalg.fill
// CHECK:       %[[S:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<4x5xf32>) outs(%[[Z]] : tensor<f32>)
// CHECK:       %[[Q:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<4x5xf32>) outs(%[[P]] : tensor<4x5xf32>)
// CHECK:       return %[[Q]], %[[S]]
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @moved_reader(%x: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x5xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x5xf32>) outs(%e : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.exp %in : f32
    linalg.yield %y : f32
  } -> tensor<4x5xf32>
  %o = tensor.empty() : tensor<4x5xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<4x5xf32>) outs(%o : tensor<4x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.tanh %in : f32
    linalg.yield %y : f32
  } -> tensor<4x5xf32>
  %se = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%se : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%p : tensor<4x5xf32>) outs(%z : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %t = arith.addf %acc, %in : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %q, %s : tensor<4x5xf32>, tensor<f32>
}
