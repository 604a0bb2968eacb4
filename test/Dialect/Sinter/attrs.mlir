// RUN: sinter-opt %s | sinter-opt | FileCheck %s

// Each kind of place keeps its sinter.* attributes through a round trip.

// CHECK: module attributes {sinter.bucket_cap_mb = 2.500000e+01 : f64, sinter.optimizer = "adamw", sinter.sync_batch_norm}
module attributes {sinter.bucket_cap_mb = 25.0 : f64, sinter.optimizer = "adamw",
                   sinter.sync_batch_norm} {
  // CHECK: func.func @step(%{{.*}}: tensor<4xf32> {sinter.init = "zeros", sinter.init_args = array<f64>, sinter.param = "w"},
  // CHECK-SAME: %{{.*}}: tensor<2xi32> {sinter.ignore_index = -100 : i64, sinter.input = "y", sinter.value_bound = 10 : i64, sinter.value_bound_source = "cross_entropy"})
  // CHECK-SAME: -> (tensor<4xf32> {sinter.gradient = "w"})
  // CHECK-SAME: attributes {sinter.phase = "train"}
  func.func @step(%w: tensor<4xf32> {sinter.param = "w", sinter.init = "zeros",
                                      sinter.init_args = array<f64>},
                  %y: tensor<2xi32> {sinter.input = "y", sinter.value_bound = 10,
                                      sinter.value_bound_source = "cross_entropy",
                                      sinter.ignore_index = -100})
      -> (tensor<4xf32> {sinter.gradient = "w"}) attributes {sinter.phase = "train"} {
    return %w : tensor<4xf32>
  }
  // CHECK: memref.alloc() {sinter.nested_arena}
  func.func @arena() {
    %0 = memref.alloc() {sinter.nested_arena} : memref<16xi8>
    memref.dealloc %0 : memref<16xi8>
    return
  }
}
