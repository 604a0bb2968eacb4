// RUN: sinter-opt %s -sinter-narrow-call-boundaries -cse -split-input-file | FileCheck %s

// A layer saves its f32 projection [2, 4, 6]; forward and backward both
// cut two halves from it, transpose them and round them to bf16 for their
// consumer. After the pass (and CSE) the forward function returns its own
// two bf16 copies, the backward function takes them, and each call site
// passes them: the backward function makes no copy and never sees the f32
// value. Both layers' chains are alike, so both call sites change.
// CHECK-LABEL: func.func private @layer.fwd(
// CHECK-SAME:    -> (tensor<2x3x4xf32>, tensor<2x3x4xbf16>, tensor<2x3x4xbf16>)
// CHECK:         %[[Q:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4x3xf32>) outs(%{{.*}} : tensor<2x3x4xbf16>)
// CHECK:         %[[K:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4x3xf32>) outs(%{{.*}} : tensor<2x3x4xbf16>)
// CHECK:         %[[USE:.*]] = linalg.generic {{.*}} ins(%[[Q]], %[[K]] :
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[USE]], %[[Q]], %[[K]] :
// CHECK-LABEL: func.func private @layer.bwd(
// CHECK-SAME:    %[[GQ:[a-z0-9]+]]: tensor<2x3x4xbf16>, %[[GK:[a-z0-9]+]]: tensor<2x3x4xbf16>) -> tensor<2x3x4xf32>
// CHECK-NOT:     extract_slice
// CHECK:         linalg.generic {{.*}} ins(%[[GQ]], %[[GK]] :
// CHECK-NOT:     linalg.generic
// CHECK-LABEL: func.func @step(
// CHECK:         %[[A:.*]]:3 = call @layer.fwd(
// CHECK:         %[[B:.*]]:3 = call @layer.fwd(
// CHECK:         call @layer.bwd(%[[B]]#1, %[[B]]#2)
// CHECK:         call @layer.bwd(%[[A]]#1, %[[A]]#2)
#id3 = affine_map<(a, b, c) -> (a, b, c)>
#swap = affine_map<(a, b, c) -> (a, c, b)>
func.func private @layer.fwd(%x: tensor<2x4x6xf32>) -> (tensor<2x4x6xf32>, tensor<2x3x4xf32>) {
  %q = tensor.extract_slice %x[0, 0, 0] [2, 4, 3] [1, 1, 1] : tensor<2x4x6xf32> to tensor<2x4x3xf32>
  %k = tensor.extract_slice %x[0, 0, 3] [2, 4, 3] [1, 1, 1] : tensor<2x4x6xf32> to tensor<2x4x3xf32>
  %e = tensor.empty() : tensor<2x3x4xbf16>
  %qr = linalg.generic {indexing_maps = [#swap, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x4x3xf32>) outs(%e : tensor<2x3x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x3x4xbf16>
  %kr = linalg.generic {indexing_maps = [#swap, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x4x3xf32>) outs(%e : tensor<2x3x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x3x4xbf16>
  %f = tensor.empty() : tensor<2x3x4xf32>
  %use = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qr, %kr : tensor<2x3x4xbf16>, tensor<2x3x4xbf16>) outs(%f : tensor<2x3x4xf32>) {
  ^bb0(%a: bf16, %b: bf16, %out: f32):
    %m = arith.mulf %a, %b : bf16
    %w = arith.extf %m : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x3x4xf32>
  return %x, %use : tensor<2x4x6xf32>, tensor<2x3x4xf32>
}
func.func private @layer.bwd(%x: tensor<2x4x6xf32>) -> tensor<2x3x4xf32> {
  %q = tensor.extract_slice %x[0, 0, 0] [2, 4, 3] [1, 1, 1] : tensor<2x4x6xf32> to tensor<2x4x3xf32>
  %k = tensor.extract_slice %x[0, 0, 3] [2, 4, 3] [1, 1, 1] : tensor<2x4x6xf32> to tensor<2x4x3xf32>
  %e = tensor.empty() : tensor<2x3x4xbf16>
  %qr = linalg.generic {indexing_maps = [#swap, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%q : tensor<2x4x3xf32>) outs(%e : tensor<2x3x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x3x4xbf16>
  %kr = linalg.generic {indexing_maps = [#swap, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%k : tensor<2x4x3xf32>) outs(%e : tensor<2x3x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x3x4xbf16>
  %f = tensor.empty() : tensor<2x3x4xf32>
  %g = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%qr, %kr : tensor<2x3x4xbf16>, tensor<2x3x4xbf16>) outs(%f : tensor<2x3x4xf32>) {
  ^bb0(%a: bf16, %b: bf16, %out: f32):
    %s = arith.addf %a, %b : bf16
    %w = arith.extf %s : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x3x4xf32>
  return %g : tensor<2x3x4xf32>
}
func.func @step(%x: tensor<2x4x6xf32>, %y: tensor<2x4x6xf32>)
    -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %a:2 = call @layer.fwd(%x) : (tensor<2x4x6xf32>) -> (tensor<2x4x6xf32>, tensor<2x3x4xf32>)
  %b:2 = call @layer.fwd(%y) : (tensor<2x4x6xf32>) -> (tensor<2x4x6xf32>, tensor<2x3x4xf32>)
  %gb = call @layer.bwd(%b#0) : (tensor<2x4x6xf32>) -> tensor<2x3x4xf32>
  %ga = call @layer.bwd(%a#0) : (tensor<2x4x6xf32>) -> tensor<2x3x4xf32>
  return %ga, %gb, %a#1, %b#1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// Left alone: the backward function also reads the f32 value itself, so
// passing the copies would pass more, not less.
// CHECK-LABEL: func.func private @also_read.bwd(
// CHECK-SAME:    tensor<2x4xf32>)
// CHECK:         linalg.generic
// CHECK-LABEL: func.func @also_read(
// CHECK:         call @also_read.bwd(%{{.*}}) : (tensor<2x4xf32>)
#id2 = affine_map<(a, b) -> (a, b)>
func.func private @also_read.fwd(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}
func.func private @also_read.bwd(%x: tensor<2x4xf32>) -> (tensor<2x4xbf16>, tensor<2x4xf32>) {
  %e = tensor.empty() : tensor<2x4xbf16>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x4xbf16>
  return %r, %x : tensor<2x4xbf16>, tensor<2x4xf32>
}
func.func @also_read(%x: tensor<2x4xf32>) -> (tensor<2x4xbf16>, tensor<2x4xf32>) {
  %a = call @also_read.fwd(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %r:2 = call @also_read.bwd(%a) : (tensor<2x4xf32>) -> (tensor<2x4xbf16>, tensor<2x4xf32>)
  return %r#0, %r#1 : tensor<2x4xbf16>, tensor<2x4xf32>
}

// -----

// Left alone: widening bf16 to f32 would pass twice the bytes.
// CHECK-LABEL: func.func private @wider.bwd(
// CHECK-SAME:    tensor<2x4xbf16>)
// CHECK-LABEL: func.func @wider(
// CHECK:         call @wider.bwd(%{{.*}}) : (tensor<2x4xbf16>)
#id2 = affine_map<(a, b) -> (a, b)>
func.func private @wider.fwd(%x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  return %x : tensor<2x4xbf16>
}
func.func private @wider.bwd(%x: tensor<2x4xbf16>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x4xbf16>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: bf16, %out: f32):
    %t = arith.extf %in : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
func.func @wider(%x: tensor<2x4xbf16>) -> tensor<2x4xf32> {
  %a = call @wider.fwd(%x) : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %r = call @wider.bwd(%a) : (tensor<2x4xbf16>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// Left alone: the caller also returns the f32 value, so the rounding could
// not move on into the function that made it, and in the caller it would
// be a loop of its own.
// CHECK-LABEL: func.func private @kept.fwd(
// CHECK-SAME:    -> tensor<2x4xf32>
// CHECK-LABEL: func.func private @kept.bwd(
// CHECK-SAME:    tensor<2x4xf32>)
// CHECK-LABEL: func.func @kept(
// CHECK:         %[[A:.*]] = call @kept.fwd(
// CHECK-NOT:     linalg.generic
// CHECK:         call @kept.bwd(%[[A]])
#id2 = affine_map<(a, b) -> (a, b)>
func.func private @kept.fwd(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  return %x : tensor<2x4xf32>
}
func.func private @kept.bwd(%x: tensor<2x4xf32>) -> tensor<2x4xbf16> {
  %e = tensor.empty() : tensor<2x4xbf16>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %t = arith.truncf %in : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x4xbf16>
  return %r : tensor<2x4xbf16>
}
func.func @kept(%x: tensor<2x4xf32>) -> (tensor<2x4xbf16>, tensor<2x4xf32>) {
  %a = call @kept.fwd(%x) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = call @kept.bwd(%a) : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  return %r, %a : tensor<2x4xbf16>, tensor<2x4xf32>
}

// -----

// The forward loop adds a bias and writes the sum both in f32 and rounded
// (what the forward pass reads next); the backward function rounds the
// saved f32 sum again. Moved into the forward function, that rounding is
// the loop's rounded output, which the forward function returns: no second
// rounding loop, and the f32 sum is no longer returned.
// CHECK-LABEL: func.func private @proj.fwd(
// CHECK-SAME:    -> (tensor<4x6xbf16>, tensor<4x6xbf16>)
// CHECK:         %[[P:.*]]:2 = linalg.generic
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[P]]#1, %[[P]]#1 : tensor<4x6xbf16>, tensor<4x6xbf16>
// CHECK-LABEL: func.func private @proj.bwd(
// CHECK-SAME:    %[[T:.*]]: tensor<4x6xbf16>) -> tensor<4x6xbf16>
// CHECK-NEXT:    return %[[T]]
#id2 = affine_map<(a, b) -> (a, b)>
#row = affine_map<(a, b) -> (b)>
func.func private @proj.fwd(%x: tensor<4x6xf32>, %b: tensor<6xf32>) -> (tensor<4x6xf32>, tensor<4x6xbf16>) {
  %e = tensor.empty() : tensor<4x6xf32>
  %r = tensor.empty() : tensor<4x6xbf16>
  %p:2 = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x6xf32>, tensor<6xf32>) outs(%e, %r : tensor<4x6xf32>, tensor<4x6xbf16>) {
  ^bb0(%in: f32, %bias: f32, %o: f32, %ob: bf16):
    %s = arith.addf %in, %bias : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %s, %t : f32, bf16
  } -> (tensor<4x6xf32>, tensor<4x6xbf16>)
  return %p#0, %p#1 : tensor<4x6xf32>, tensor<4x6xbf16>
}
func.func private @proj.bwd(%s: tensor<4x6xf32>) -> tensor<4x6xbf16> {
  %e = tensor.empty() : tensor<4x6xbf16>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x6xf32>) outs(%e : tensor<4x6xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %c = arith.truncf %in : f32 to bf16
    linalg.yield %c : bf16
  } -> tensor<4x6xbf16>
  return %t : tensor<4x6xbf16>
}
func.func @step(%x: tensor<4x6xf32>, %b: tensor<6xf32>) -> (tensor<4x6xbf16>, tensor<4x6xbf16>) {
  %s:2 = call @proj.fwd(%x, %b) : (tensor<4x6xf32>, tensor<6xf32>) -> (tensor<4x6xf32>, tensor<4x6xbf16>)
  %t = call @proj.bwd(%s#0) : (tensor<4x6xf32>) -> tensor<4x6xbf16>
  return %s#1, %t : tensor<4x6xbf16>, tensor<4x6xbf16>
}

// -----

// A residual stream's gradient in bf16 (precision { residual: BF16 }): each
// layer's backward function rounds the gradient it is given, made by the
// layer after it, or for the last layer by a loop of the step that only
// that call reads; the step rounds what the first layer returns. The
// rounding moves out of the function, then into it before it returns: each
// layer writes its gradient rounded, the step's loop rounds its own output
// (fusion makes them one loop), and the step's rounding goes.
// CHECK-LABEL: func.func private @grad.bwd(
// CHECK-SAME:    %[[G:.*]]: tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK:         %[[D:.*]] = linalg.generic {{.*}} ins(%[[G]], %[[G]] :
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[D]] :
// CHECK:           arith.truncf
// CHECK:           arith.extf
// CHECK:         return %[[R]]
// CHECK-LABEL: func.func @stream(
// CHECK:         %[[L:.*]] = linalg.generic {{.*}} ins(%arg0 :
// CHECK:         %[[LR:.*]] = linalg.generic {{.*}} ins(%[[L]] :
// CHECK:           arith.truncf
// CHECK:         %[[B1:.*]] = call @grad.bwd(%[[LR]])
// CHECK:         %[[B0:.*]] = call @grad.bwd(%[[B1]])
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[B0]]
#id2 = affine_map<(a, b) -> (a, b)>
func.func private @grad.bwd(%g: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.truncf %in : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x4xf32>
  %d = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%r, %r : tensor<2x4xf32>, tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  return %d : tensor<2x4xf32>
}
func.func @stream(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %l = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %b1 = call @grad.bwd(%l) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b0 = call @grad.bwd(%b1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%b0 : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.truncf %in : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// Left alone: the loop that makes the last layer's gradient is read by the
// step too, so a rounding moved there would be a loop of its own.
// CHECK-LABEL: func.func private @shared.bwd(
// CHECK:         linalg.generic
// CHECK:           arith.truncf
// CHECK-LABEL: func.func @shared(
// CHECK:         %[[L:.*]] = linalg.generic
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.mulf
// CHECK:         call @shared.bwd(%[[L]])
#id2 = affine_map<(a, b) -> (a, b)>
func.func private @shared.bwd(%g: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.truncf %in : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
func.func @shared(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %e = tensor.empty() : tensor<2x4xf32>
  %l = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %b = call @shared.bwd(%l) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %b, %l : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Left alone: a rounding moves only into a loop it fuses with. The step's
// operand is a row sum (a reduction), made outside the loop that calls;
// fusion could take the rounding into neither, so it would be a loop of
// its own in the step where it was read within the function.
// CHECK-LABEL: func.func private @unfused.bwd(
// CHECK:         linalg.generic
// CHECK:           arith.truncf
// CHECK-LABEL: func.func @unfused(
// CHECK-NOT:     arith.truncf
// CHECK:         return
#id2 = affine_map<(a, b) -> (a, b)>
#rows = affine_map<(a, b, c) -> (a, b, c)>
#sum = affine_map<(a, b, c) -> (a, b)>
func.func private @unfused.bwd(%g: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %e = tensor.empty() : tensor<2x4xf32>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %t = arith.truncf %in : f32 to bf16
    %w = arith.extf %t : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
func.func @unfused(%x: tensor<2x4x3xf32>, %y: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [#rows, #sum], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x4x3xf32>) outs(%z : tensor<2x4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %in, %acc : f32
    linalg.yield %a : f32
  } -> tensor<2x4xf32>
  %b = call @unfused.bwd(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %l = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %loop = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %b) -> tensor<2x4xf32> {
    %c = func.call @unfused.bwd(%l) : (tensor<2x4xf32>) -> tensor<2x4xf32>
    scf.yield %c : tensor<2x4xf32>
  }
  return %b, %loop : tensor<2x4xf32>, tensor<2x4xf32>
}
