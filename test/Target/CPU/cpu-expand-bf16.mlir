// RUN: sinter-opt %s -sinter-cpu-expand-bf16 | FileCheck %s

// Rounding to bf16 and widening from it are bit operations (no truncf or
// extf on bf16 is left for LLVM, which would call a runtime function on
// CPUs without AVX512-BF16); f32 to f64 stays.
// CHECK-LABEL: func.func @round_trip
// CHECK-NOT:   arith.truncf {{.*}} to bf16
// CHECK-NOT:   arith.extf {{.*}} bf16
// CHECK:       arith.bitcast {{.*}} : f32 to i32
// CHECK:       arith.shrui
// CHECK:       arith.extf %{{.*}} : f32 to f64
func.func @round_trip(%x: f32) -> (bf16, f32, f64) {
  %r = arith.truncf %x : f32 to bf16
  %w = arith.extf %r : bf16 to f32
  %d = arith.extf %x : f32 to f64
  return %r, %w, %d : bf16, f32, f64
}
