// RUN: sinter-opt %s -sinter-cpu-math-approximations -split-input-file | FileCheck %s

// A call of libm in a loop body keeps the loop from vectorizing. The f32
// exp, log, tanh and erf of softmax, cross-entropy and GELU become
// polynomials of plain arithmetic (fused multiply-adds), with no call left.
// CHECK-LABEL: func.func @f32(
// CHECK-NOT:     math.{{(exp|log|tanh|erf) }}
// CHECK-NOT:     call
// CHECK:         math.fma
// CHECK-NOT:     math.{{(exp|log|tanh|erf) }}
// CHECK-NOT:     call
// CHECK:         return
func.func @f32(%x: f32) -> (f32, f32, f32, f32) {
  %e = math.exp %x : f32
  %l = math.log %x : f32
  %t = math.tanh %x : f32
  %r = math.erf %x : f32
  return %e, %l, %t, %r : f32, f32, f32, f32
}

// -----

// Vectors of f32 too: the polynomial is computed on the whole vector.
// CHECK-LABEL: func.func @vector(
// CHECK-NOT:     math.exp
// CHECK:         math.fma {{.*}} : vector<8xf32>
// CHECK-NOT:     math.exp
// CHECK:         return {{.*}} : vector<8xf32>
func.func @vector(%x: vector<8xf32>) -> vector<8xf32> {
  %e = math.exp %x : vector<8xf32>
  return %e : vector<8xf32>
}

// -----

// f64 keeps libm, whose accuracy the f64 gradient checks rely on.
// CHECK-LABEL: func.func @f64(
// CHECK-NEXT:    %[[E:.*]] = math.exp %arg0 : f64
// CHECK-NEXT:    %[[L:.*]] = math.log %arg0 : f64
// CHECK-NEXT:    %[[T:.*]] = math.tanh %arg0 : f64
// CHECK-NEXT:    %[[R:.*]] = math.erf %arg0 : f64
// CHECK-NEXT:    return %[[E]], %[[L]], %[[T]], %[[R]]
func.func @f64(%x: f64) -> (f64, f64, f64, f64) {
  %e = math.exp %x : f64
  %l = math.log %x : f64
  %t = math.tanh %x : f64
  %r = math.erf %x : f64
  return %e, %l, %t, %r : f64, f64, f64, f64
}

// -----

// Types narrower than f32 are not widened to take the f32 polynomial.
// CHECK-LABEL: func.func @f16(
// CHECK-NEXT:    %[[E:.*]] = math.exp %arg0 : f16
// CHECK-NEXT:    return %[[E]] : f16
func.func @f16(%x: f16) -> f16 {
  %e = math.exp %x : f16
  return %e : f16
}
