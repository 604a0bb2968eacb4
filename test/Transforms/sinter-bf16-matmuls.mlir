// RUN: sinter-opt %s -sinter-bf16-matmuls -split-input-file | FileCheck %s
// RUN: sinter-opt %s -sinter-bf16-matmuls=compute=f32 -split-input-file | FileCheck %s --check-prefix=F32
// RUN: not sinter-opt %s -sinter-bf16-matmuls=compute=f16 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// F32-NOT: truncf
// BAD: unknown compute 'f16'; expected f32 or bf16

// compute: BF16 (the module's sinter.compute): each matmul reads its inputs
// rounded to bf16 and sums into its f32 result; its form (B read
// transposed) stays. A value two matmuls read (x here) is rounded once,
// after its definition.
// CHECK-LABEL: func.func @linear(
// CHECK-SAME:    %[[X:.+]]: tensor<8x4xf32>, %[[W:.+]]: tensor<6x4xf32>, %[[V:.+]]: tensor<3x4xf32>)
// CHECK:         %[[V16:.+]] = linalg.generic {{.*}} ins(%[[V]] : tensor<3x4xf32>) outs(%{{.+}} : tensor<3x4xbf16>)
// CHECK-NEXT:    ^bb0(%[[IN:.+]]: f32, %{{.+}}: bf16):
// CHECK-NEXT:      %[[R:.+]] = arith.truncf %[[IN]] : f32 to bf16
// CHECK-NEXT:      linalg.yield %[[R]] : bf16
// CHECK:         %[[W16:.+]] = linalg.generic {{.*}} ins(%[[W]] : tensor<6x4xf32>) outs(%{{.+}} : tensor<6x4xbf16>)
// CHECK:         %[[X16:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x4xf32>) outs(%{{.+}} : tensor<8x4xbf16>)
// CHECK:         arith.truncf
// CHECK-NOT:     arith.truncf
// CHECK:         linalg.matmul indexing_maps = [{{.+}}] ins(%[[X16]], %[[W16]] : tensor<8x4xbf16>, tensor<6x4xbf16>) outs(%{{.+}} : tensor<8x6xf32>) -> tensor<8x6xf32>
// CHECK:         linalg.matmul indexing_maps = [{{.+}}] ins(%[[X16]], %[[V16]] : tensor<8x4xbf16>, tensor<3x4xbf16>) outs(%{{.+}} : tensor<8x3xf32>) -> tensor<8x3xf32>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
module attributes {sinter.compute = "bf16"} {
  func.func @linear(%x: tensor<8x4xf32>, %w: tensor<6x4xf32>, %v: tensor<3x4xf32>)
      -> (tensor<8x6xf32>, tensor<8x3xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x6xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
    %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
        ins(%x, %w : tensor<8x4xf32>, tensor<6x4xf32>) outs(%c : tensor<8x6xf32>) -> tensor<8x6xf32>
    %e2 = tensor.empty() : tensor<8x3xf32>
    %c2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x3xf32>) -> tensor<8x3xf32>
    %z = linalg.matmul indexing_maps = [#mk, #nk, #mn]
        ins(%x, %v : tensor<8x4xf32>, tensor<3x4xf32>) outs(%c2 : tensor<8x3xf32>) -> tensor<8x3xf32>
    return %y, %z : tensor<8x6xf32>, tensor<8x3xf32>
  }
}

// -----

// Batched products (attention's) too, keeping their default maps; a value
// defined in the body is rounded right after its definition.
// CHECK-LABEL: func.func @attention(
// CHECK:         %[[Q:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x8x4xf32>) outs(%{{.+}} : tensor<2x8x4xf32>)
// CHECK:         arith.mulf
// CHECK:         %[[Q16:.+]] = linalg.generic {{.*}} ins(%[[Q]] : tensor<2x8x4xf32>) outs(%{{.+}} : tensor<2x8x4xbf16>)
// CHECK:         linalg.batch_matmul ins(%[[Q16]], %{{.+}} : tensor<2x8x4xbf16>, tensor<2x4x8xbf16>) outs(%{{.+}} : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module attributes {sinter.compute = "bf16"} {
  func.func @attention(%q: tensor<2x8x4xf32>, %k: tensor<2x4x8xf32>) -> tensor<2x8x8xf32> {
    %zero = arith.constant 0.0 : f32
    %eq = tensor.empty() : tensor<2x8x4xf32>
    %qs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%q : tensor<2x8x4xf32>) outs(%eq : tensor<2x8x4xf32>) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.mulf %a, %a : f32
      linalg.yield %s : f32
    } -> tensor<2x8x4xf32>
    %e = tensor.empty() : tensor<2x8x8xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    %s = linalg.batch_matmul ins(%qs, %k : tensor<2x8x4xf32>, tensor<2x4x8xf32>)
        outs(%c : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
    return %s : tensor<2x8x8xf32>
  }
}

// -----

// Without sinter.compute (or with "f32"), nothing changes.
// CHECK-LABEL: func.func @f32_module(
// CHECK-NOT:     truncf
func.func @f32_module(%a: tensor<8x4xf32>, %b: tensor<4x6xf32>, %c: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<8x4xf32>, tensor<4x6xf32>) outs(%c : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}

// -----

// A private function's argument that only matmuls read takes bf16, and its
// callers round it: a weight that two calls (a layer's forward and
// backward) read is rounded once, in the caller. An argument read by
// anything else (v, also returned) stays f32 and is rounded in the callee.
// CHECK-LABEL: func.func private @layer(
// CHECK-SAME:    %[[X:.+]]: tensor<8x4xbf16>, %[[W:.+]]: tensor<4x6xbf16>, %[[V:.+]]: tensor<4x6xf32>)
// CHECK:         %[[V16:.+]] = linalg.generic {{.*}} ins(%[[V]] : tensor<4x6xf32>)
// CHECK:         linalg.matmul ins(%[[X]], %[[W]] : tensor<8x4xbf16>, tensor<4x6xbf16>)
// CHECK:         linalg.matmul ins(%[[X]], %[[V16]] : tensor<8x4xbf16>, tensor<4x6xbf16>)
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[SW:.+]]: tensor<4x6xf32>, %[[SX:.+]]: tensor<8x4xf32>, %[[SV:.+]]: tensor<4x6xf32>)
// CHECK:         %[[SW16:.+]] = linalg.generic {{.*}} ins(%[[SW]] : tensor<4x6xf32>) outs(%{{.+}} : tensor<4x6xbf16>)
// CHECK:         %[[SX16:.+]] = linalg.generic {{.*}} ins(%[[SX]] : tensor<8x4xf32>) outs(%{{.+}} : tensor<8x4xbf16>)
// CHECK:         call @layer(%[[SX16]], %[[SW16]], %[[SV]])
// CHECK-NEXT:    call @layer(%[[SX16]], %[[SW16]], %[[SV]])
module attributes {sinter.compute = "bf16"} {
  func.func private @layer(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %v: tensor<4x6xf32>)
      -> (tensor<8x6xf32>, tensor<8x6xf32>, tensor<4x6xf32>) {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x6xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
    %y = linalg.matmul ins(%x, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%c : tensor<8x6xf32>) -> tensor<8x6xf32>
    %z = linalg.matmul ins(%x, %v : tensor<8x4xf32>, tensor<4x6xf32>) outs(%c : tensor<8x6xf32>) -> tensor<8x6xf32>
    return %y, %z, %v : tensor<8x6xf32>, tensor<8x6xf32>, tensor<4x6xf32>
  }
  func.func @step(%w: tensor<4x6xf32>, %x: tensor<8x4xf32>, %v: tensor<4x6xf32>)
      -> (tensor<8x6xf32>, tensor<8x6xf32>) {
    %0:3 = call @layer(%x, %w, %v) : (tensor<8x4xf32>, tensor<4x6xf32>, tensor<4x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>, tensor<4x6xf32>)
    %1:3 = call @layer(%x, %w, %v) : (tensor<8x4xf32>, tensor<4x6xf32>, tensor<4x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>, tensor<4x6xf32>)
    return %0#0, %1#1 : tensor<8x6xf32>, tensor<8x6xf32>
  }
}

// -----

// A matmul input that is a reshape of a loop's result (a layer's [B, T, C]
// activations seen as [B*T, C]) is rounded before the reshape, where it
// reads the loop's own result: fusion can then give the rounding to that
// loop, which writes both values.
// CHECK-LABEL: func.func @reshaped(
// CHECK:         %[[H:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x4x4xf32>) outs(%{{.+}} : tensor<2x4x4xf32>)
// CHECK:         %[[H16:.+]] = linalg.generic {{.*}} ins(%[[H]] : tensor<2x4x4xf32>) outs(%{{.+}} : tensor<2x4x4xbf16>)
// CHECK:         %[[FLAT:.+]] = tensor.collapse_shape %[[H16]] {{\[}}[0, 1], [2]] : tensor<2x4x4xbf16> into tensor<8x4xbf16>
// CHECK:         linalg.matmul indexing_maps = [{{.+}}] ins(%[[FLAT]], %{{.+}} : tensor<8x4xbf16>, tensor<6x4xbf16>)
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
module attributes {sinter.compute = "bf16"} {
  func.func @reshaped(%x: tensor<2x4x4xf32>, %w: tensor<6x4xf32>)
      -> (tensor<8x6xf32>, tensor<2x4x4xf32>) {
    %e0 = tensor.empty() : tensor<2x4x4xf32>
    %h = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
        ins(%x : tensor<2x4x4xf32>) outs(%e0 : tensor<2x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<2x4x4xf32>
    %flat = tensor.collapse_shape %h [[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x6xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
    %y = linalg.matmul indexing_maps = [#mk, #nk, #mn]
        ins(%flat, %w : tensor<8x4xf32>, tensor<6x4xf32>) outs(%c : tensor<8x6xf32>) -> tensor<8x6xf32>
    return %y, %h : tensor<8x6xf32>, tensor<2x4x4xf32>
  }
}

// -----

// An activation the forward function keeps only for a matmul of the
// backward function: the backward takes it in bf16, and the forward
// returns it in bf16, rounded where it is computed (next to the rounding
// its own matmul reads), so the f32 value is never passed on. A result
// something else reads in f32 (y, returned by the step) stays f32.
// CHECK-LABEL: func.func private @forward(
// CHECK-SAME:    -> (tensor<8x6xf32>, tensor<8x4xbf16>)
// CHECK:         %[[H:.+]] = linalg.generic {{.*}} ins(%arg0 : tensor<8x4xf32>)
// CHECK:         math.tanh
// CHECK:         %[[H16:.+]] = linalg.generic {{.*}} ins(%[[H]] : tensor<8x4xf32>) outs(%{{.+}} : tensor<8x4xbf16>)
// CHECK:         %[[Y:.+]] = linalg.matmul ins(%[[H16]], %{{.+}} : tensor<8x4xbf16>, tensor<4x6xbf16>)
// CHECK:         return %[[Y]], %[[H16]] : tensor<8x6xf32>, tensor<8x4xbf16>
// CHECK-LABEL: func.func private @backward(
// CHECK-SAME:    %[[SAVED:.+]]: tensor<8x4xbf16>, %[[DY:.+]]: tensor<8x6xbf16>)
// CHECK-NOT:     arith.truncf
// CHECK:         linalg.matmul {{.*}}ins(%[[SAVED]], %[[DY]] : tensor<8x4xbf16>, tensor<8x6xbf16>)
// CHECK-LABEL: func.func @step(
// CHECK:         %[[F:.+]]:2 = call @forward(
// CHECK:         call @backward(%[[F]]#1, %{{.+}})
#id2 = affine_map<(i, j) -> (i, j)>
#km = affine_map<(d0, d1, d2) -> (d2, d0)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
module attributes {sinter.compute = "bf16"} {
  func.func private @forward(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>)
      -> (tensor<8x6xf32>, tensor<8x4xf32>) {
    %e0 = tensor.empty() : tensor<8x4xf32>
    %h = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x4xf32>) outs(%e0 : tensor<8x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<8x4xf32>
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x6xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
    %y = linalg.matmul ins(%h, %w : tensor<8x4xf32>, tensor<4x6xf32>) outs(%c : tensor<8x6xf32>) -> tensor<8x6xf32>
    return %y, %h : tensor<8x6xf32>, tensor<8x4xf32>
  }
  func.func private @backward(%h: tensor<8x4xf32>, %dy: tensor<8x6xf32>) -> tensor<4x6xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x6xf32>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
    %dw = linalg.matmul indexing_maps = [#km, #kn, #mn]
        ins(%h, %dy : tensor<8x4xf32>, tensor<8x6xf32>) outs(%c : tensor<4x6xf32>) -> tensor<4x6xf32>
    return %dw : tensor<4x6xf32>
  }
  func.func @step(%x: tensor<8x4xf32>, %w: tensor<4x6xf32>, %dy: tensor<8x6xf32>)
      -> (tensor<8x6xf32>, tensor<4x6xf32>) {
    %f:2 = call @forward(%x, %w) : (tensor<8x4xf32>, tensor<4x6xf32>) -> (tensor<8x6xf32>, tensor<8x4xf32>)
    %dw = call @backward(%f#1, %dy) : (tensor<8x4xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
    return %f#0, %dw : tensor<8x6xf32>, tensor<4x6xf32>
  }
}
