// RUN: sinter-opt %s -sinter-bf16-matmul-results=activations=bf16 -split-input-file | FileCheck %s
// RUN: sinter-opt %s -sinter-bf16-matmul-results -split-input-file | FileCheck %s --check-prefix=OFF

// A projection with a bias, and the rounding its reader made of it: the
// product starts from the bias rounded to bf16 and writes bf16; the reader's
// rounding is the element itself, through the views, so the loop left
// copying it goes and the function returns the view. Without the setting
// nothing changes.
// CHECK-LABEL: func.func @projection(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<8x4xbf16>, %[[W:[^:]*]]: tensor<6x4xbf16> {sinter.param = "w"}, %[[B:[^:]*]]: tensor<6xf32>
// CHECK:       %[[RB:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<6xf32>) outs(%{{.*}} : tensor<6xbf16>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// CHECK-NEXT:    arith.truncf %[[IN]] : f32 to bf16
// CHECK:       %[[ROWS:.*]] = linalg.broadcast ins(%[[RB]] : tensor<6xbf16>) outs(%{{.*}} : tensor<8x6xbf16>) dimensions = [0]
// CHECK:       %[[P:.*]] = linalg.matmul {{.*}} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[ROWS]] : tensor<8x6xbf16>) -> tensor<8x6xbf16>
// CHECK:       %[[E:.*]] = tensor.expand_shape %[[P]] {{.*}} : tensor<8x6xbf16> into tensor<2x4x6xbf16>
// CHECK:       %[[S:.*]] = tensor.extract_slice %[[E]]{{.*}} : tensor<2x4x6xbf16> to tensor<2x4x3xbf16>
// CHECK-NEXT:  return %[[S]] : tensor<2x4x3xbf16>
// CHECK-NOT:   tensor<8x6xf32>
// OFF-LABEL:   func.func @projection(
// OFF:         linalg.matmul {{.*}} -> tensor<8x6xf32>
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id3 = affine_map<(i, j, l) -> (i, j, l)>
func.func @projection(%x: tensor<8x4xbf16>, %w: tensor<6x4xbf16> {sinter.param = "w"}, %b: tensor<6xf32>) -> tensor<2x4x3xbf16> {
  %e = tensor.empty() : tensor<8x6xf32>
  %rows = linalg.broadcast ins(%b : tensor<6xf32>) outs(%e : tensor<8x6xf32>) dimensions = [0]
  %p = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<8x4xbf16>, tensor<6x4xbf16>) outs(%rows : tensor<8x6xf32>) -> tensor<8x6xf32>
  %p3 = tensor.expand_shape %p [[0, 1], [2]] output_shape [2, 4, 6] : tensor<8x6xf32> into tensor<2x4x6xf32>
  %q = tensor.extract_slice %p3[0, 0, 0] [2, 4, 3] [1, 1, 1] : tensor<2x4x6xf32> to tensor<2x4x3xf32>
  %o = tensor.empty() : tensor<2x4x3xbf16>
  %r = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x4x3xf32>) outs(%o : tensor<2x4x3xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x4x3xbf16>
  return %r : tensor<2x4x3xbf16>
}

// -----

// The logits (the parameter reached through its rounding): written in
// bf16 onto bf16 zeros; the row reduction widens each element it reads, and
// the target's logit is widened after its extract. The weight's gradient
// (neither operand a parameter) keeps its f32 sum.
// CHECK-LABEL: func.func @logits(
// CHECK:       %[[Z:.*]] = linalg.fill ins(%{{.*}} : bf16) outs(%{{.*}} : tensor<8x10xbf16>)
// CHECK:       %[[L:.*]] = linalg.matmul {{.*}} outs(%[[Z]] : tensor<8x10xbf16>) -> tensor<8x10xbf16>
// CHECK:       linalg.generic {{.*}} ins(%[[L]] : tensor<8x10xbf16>)
// CHECK-NEXT:  ^bb0(%[[IN:.*]]: bf16, %[[OUT:.*]]: f32):
// CHECK-NEXT:    %[[WIDE:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:    arith.maximumf %[[OUT]], %[[WIDE]] : f32
// CHECK:       %[[T:.*]] = tensor.extract %[[L]][%{{.*}}, %{{.*}}] : tensor<8x10xbf16>
// CHECK-NEXT:  %[[TW:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK:       linalg.matmul {{.*}} outs(%{{.*}} : tensor<10x4xf32>) -> tensor<10x4xf32>
// CHECK:       return %{{.*}}, %[[TW]]
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#at = affine_map<(m, n, k) -> (k, m)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @logits(%h: tensor<8x4xbf16>, %wte: tensor<10x4xf32> {sinter.param = "wte"}, %d: tensor<8x10xbf16>, %i: index) -> (tensor<8xf32>, tensor<10x4xf32>, f32) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %ew = tensor.empty() : tensor<10x4xbf16>
  %w16 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%wte : tensor<10x4xf32>) outs(%ew : tensor<10x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<10x4xbf16>
  %e = tensor.empty() : tensor<8x10xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x10xf32>) -> tensor<8x10xf32>
  %l = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%h, %w16 : tensor<8x4xbf16>, tensor<10x4xbf16>) outs(%z : tensor<8x10xf32>) -> tensor<8x10xf32>
  %em = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%em : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%l : tensor<8x10xf32>) outs(%m0 : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %x = arith.maximumf %out, %in : f32
    linalg.yield %x : f32
  } -> tensor<8xf32>
  %target = tensor.extract %l[%i, %i] : tensor<8x10xf32>
  %eg = tensor.empty() : tensor<10x4xf32>
  %zg = linalg.fill ins(%zero : f32) outs(%eg : tensor<10x4xf32>) -> tensor<10x4xf32>
  %g = linalg.matmul indexing_maps = [#at, #b, #c] ins(%d, %h : tensor<8x10xbf16>, tensor<8x4xbf16>) outs(%zg : tensor<10x4xf32>) -> tensor<10x4xf32>
  return %m, %g, %target : tensor<8xf32>, tensor<10x4xf32>, f32
}

// -----

// A block's kept pre-activation: the forward function returns it in bf16,
// and the backward function, which every call passes it to, takes bf16 and
// widens it where it reads it.
// CHECK-LABEL: func.func private @fwd(
// CHECK-SAME:    -> tensor<4x6xbf16>
// CHECK-LABEL: func.func private @bwd(
// CHECK-SAME:    %{{.*}}: tensor<4x6xbf16>) -> tensor<4x6xf32>
// CHECK:       ^bb0(%[[IN:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT:    arith.extf %[[IN]] : bf16 to f32
// CHECK-LABEL: func.func @step(
// CHECK:       %[[K:.*]] = call @fwd(%{{.*}}, %{{.*}}) : (tensor<4x3xbf16>, tensor<6x3xbf16>) -> tensor<4x6xbf16>
// CHECK:       call @bwd(%[[K]]) : (tensor<4x6xbf16>) -> tensor<4x6xf32>
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id2 = affine_map<(i, j) -> (i, j)>
func.func private @fwd(%x: tensor<4x3xbf16>, %w: tensor<6x3xbf16>) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<4x3xbf16>, tensor<6x3xbf16>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %p : tensor<4x6xf32>
}
func.func private @bwd(%k: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%k : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = math.tanh %in : f32
    linalg.yield %y : f32
  } -> tensor<4x6xf32>
  return %t : tensor<4x6xf32>
}
func.func @step(%x: tensor<4x3xbf16>, %w: tensor<6x3xf32> {sinter.param = "w"}) -> tensor<4x6xf32> {
  %ew = tensor.empty() : tensor<6x3xbf16>
  %w16 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<6x3xf32>) outs(%ew : tensor<6x3xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<6x3xbf16>
  %k = call @fwd(%x, %w16) : (tensor<4x3xbf16>, tensor<6x3xbf16>) -> tensor<4x6xf32>
  %g = call @bwd(%k) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %g : tensor<4x6xf32>
}

// -----

// A reader the pass cannot rewrite in place (here the step's own result)
// gets a widened copy.
// CHECK-LABEL: func.func @returned(
// CHECK:       %[[P:.*]] = linalg.matmul {{.*}} -> tensor<4x6xbf16>
// CHECK:       %[[W:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<4x6xbf16>) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK:       return %[[W]] : tensor<4x6xf32>
#a = affine_map<(m, n, k) -> (m, k)>
#bt = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @returned(%x: tensor<4x3xbf16>, %w: tensor<6x3xbf16> {sinter.param = "w"}) -> tensor<4x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.matmul indexing_maps = [#a, #bt, #c] ins(%x, %w : tensor<4x3xbf16>, tensor<6x3xbf16>) outs(%z : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %p : tensor<4x6xf32>
}

// -----

// A loop that writes a widened bf16 value (precision.residual's rounding of
// a sum, fused) writes the bf16 value instead, and its reader widens each
// element; the values are the same. A loop that reads its output's old
// value (an accumulation) is left as it is.
// CHECK-LABEL: func.func @rounded_sum(
// CHECK:       %[[S:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK:         %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT:    linalg.yield %[[T]] : bf16
// CHECK:       linalg.generic {{.*}} ins(%[[S]] : tensor<4x8xbf16>)
// CHECK-NEXT:  ^bb0(%[[E:.*]]: bf16, %{{.*}}: f32):
// CHECK-NEXT:    arith.extf %[[E]] : bf16 to f32
// CHECK-LABEL: func.func @accumulated(
// CHECK:       linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// OFF-LABEL:   func.func @rounded_sum(
// OFF:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
#id2 = affine_map<(i, j) -> (i, j)>
func.func @rounded_sum(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %sum = arith.addf %x, %y : f32
    %n = arith.truncf %sum : f32 to bf16
    %w = arith.extf %n : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %out: f32):
    %d = arith.mulf %x, %x : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}
func.func @accumulated(%a: tensor<4x8xbf16>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xbf16>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%x: bf16, %out: f32):
    %w = arith.extf %x : bf16 to f32
    %u = arith.addf %w, %out : f32
    %n = arith.truncf %u : f32 to bf16
    %v = arith.extf %n : bf16 to f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
