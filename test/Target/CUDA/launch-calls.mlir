// RUN: sinter-opt %s -sinter-cuda-launch-calls | FileCheck %s

// The kernel binary and the names table become abi.h's constants, and a
// launch a call of the runtime: the kernel's index, the grid, and one
// 8-byte slot per argument (a buffer's device pointer, an index, a scalar).
// CHECK-NOT:   gpu.binary
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[BUF:[a-z0-9]+]]: memref<8xf32>, %[[LR:[a-z0-9]+]]: f32)
// CHECK:       %[[SLOTS:.*]] = memref.alloca() : memref<3xi64>
// CHECK:       %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[BUF]]
// CHECK:       %[[P64:.*]] = arith.index_cast %[[P]] : index to i64
// CHECK:       memref.store %[[P64]], %[[SLOTS]][%c0]
// CHECK:       %[[N:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK:       memref.store %[[N]], %[[SLOTS]][%c1{{.*}}]
// CHECK:       %[[BITS:.*]] = arith.bitcast %[[LR]] : f32 to i32
// CHECK:       %[[WIDE:.*]] = arith.extui %[[BITS]] : i32 to i64
// CHECK:       memref.store %[[WIDE]], %[[SLOTS]][%c2]
// CHECK:       call @sinter_cuda_launch(%c1_i64, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64, %c3_i64, %{{.*}})
// Launches in a loop (the micro-batch loop) share the function's one
// array of slots, sized for the launch with the most arguments and made
// in the entry block: the loop does not grow the stack.
// CHECK-LABEL: func.func @micro_batches(
// CHECK-NEXT:    %[[SHARED:.*]] = memref.alloca() : memref<2xi64>
// CHECK-NOT:     memref.alloca
// CHECK:         scf.for
// CHECK:           call @sinter_cuda_launch(%c0_i64{{.*}}, %c1_i64{{.*}}, %{{.*}})
// CHECK:           call @sinter_cuda_launch(%c1_i64{{.*}}, %c2_i64{{.*}}, %{{.*}})
// CHECK:       llvm.mlir.global external constant @sinter_cuda_module("CUBIN")
// CHECK:       llvm.mlir.global external constant @sinter_cuda_module_size(5 : i64)
// CHECK:       llvm.mlir.global external constant @sinter_cuda_kernel_names("a\09x.sn:1:1\00b\09x.sn:2:1\00")
module attributes {gpu.container_module, sinter.cuda_kernels = [["a", "x.sn:1:1"], ["b", "x.sn:2:1"]]} {
  gpu.binary @sinter_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, "CUBIN">]
  func.func @step(%buf: memref<8xf32>, %lr: f32) attributes {sinter.phase = "train"} {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @sinter_kernels::@b blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%buf : memref<8xf32>, %c8 : index, %lr : f32)
    return
  }

  func.func @micro_batches(%buf: memref<8xf32>, %k: index) attributes {sinter.phase = "train"} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    scf.for %m = %c0 to %k step %c1 {
      gpu.launch_func @sinter_kernels::@a blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%buf : memref<8xf32>)
      gpu.launch_func @sinter_kernels::@b blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%buf : memref<8xf32>, %c8 : index)
    }
    return
  }
}
