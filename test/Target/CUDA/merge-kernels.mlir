// RUN: sinter-opt %s -gpu-kernel-outlining -sinter-cuda-merge-kernels -split-input-file | FileCheck %s

// Every kernel goes to one module; the same loop over another layer's
// buffers is one kernel that both launches use. The names and source lines
// are listed in launch-index order.
// CHECK:       module attributes {gpu.container_module, sinter.cuda_kernels = {{\[}}["gpt_h_fwd_k0", "gpt.sn:3:7"], ["gpt_h_fwd_k1", "gpt.sn:4:9"]]}
// CHECK-LABEL: func.func @gpt.h.fwd(
// CHECK:       gpu.launch_func @sinter_kernels::@gpt_h_fwd_k0
// CHECK:       gpu.launch_func @sinter_kernels::@gpt_h_fwd_k0
// CHECK:       gpu.launch_func @sinter_kernels::@gpt_h_fwd_k1
// CHECK:       gpu.module @sinter_kernels
// CHECK-COUNT-2: gpu.func @gpt_h_fwd_k
// CHECK-NOT:   gpu.func
// CHECK-NOT:   gpu.module
func.func @gpt.h.fwd(%a: memref<8xf32>, %b: memref<8xf32>) attributes {sinter.block = "h"} {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<8xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %a[%tx] : memref<8xf32>
    gpu.terminator
  } loc("gpt.sn":3:7)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%tx] : memref<8xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %b[%tx] : memref<8xf32>
    gpu.terminator
  } loc("gpt.sn":3:7)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<8xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %b[%tx] : memref<8xf32>
    gpu.terminator
  } loc("gpt.sn":4:9)
  return
}

// -----

// A constant table two kernels read (a causal mask) is copied by the
// outlining into each kernel's module; it moves with the kernels into
// @sinter_kernels, once.
// CHECK-LABEL: func.func @masked(
// CHECK:       gpu.module @sinter_kernels
// CHECK:       gpu.func @masked_k0
// CHECK:       gpu.func @masked_k1
// CHECK:       memref.global "private" constant @mask
// CHECK-NOT:   memref.global
memref.global "private" constant @mask : memref<8xi1> = dense<[true, false, true, false, true, false, true, false]>
func.func @masked(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %m = memref.get_global @mask : memref<8xi1>
    %keep = memref.load %m[%tx] : memref<8xi1>
    %v = memref.load %a[%tx] : memref<8xf32>
    %w = arith.select %keep, %v, %zero : f32
    memref.store %w, %a[%tx] : memref<8xf32>
    gpu.terminator
  } loc("m.sn":1:1)
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %m = memref.get_global @mask : memref<8xi1>
    %keep = memref.load %m[%tx] : memref<8xi1>
    %v = memref.load %b[%tx] : memref<8xf32>
    %w = arith.select %keep, %zero, %v : f32
    memref.store %w, %b[%tx] : memref<8xf32>
    gpu.terminator
  } loc("m.sn":2:1)
  return
}
