// RUN: sinter-opt %s -sinter-cuda-graph-regions | FileCheck %s

module attributes {gpu.container_module} {
gpu.module @kernels {
  gpu.func @k(%a: memref<4xf32>) kernel { gpu.return }
  gpu.func @s(%a: memref<4xf32>, %lr: f32) kernel { gpu.return }
  gpu.func @d(%a: memref<4xf32, strided<[1], offset: ?>>) kernel { gpu.return }
}
func.func private @sinter_cuda_matmul_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr)
func.func private @sinter_cuda_read(!llvm.ptr, !llvm.ptr, i64, i64)
func.func private @sinter_rt_library_site(i64)
func.func private @sinter_rt_load_input(!llvm.ptr, i64)
func.func private @sinter_rt_hyperparameter(i64) -> f64

// Each stretch of launches and library calls between the host's calls is a
// region. Its signature is what it takes from outside, in the order of
// first use: the buffers' pointers (a view's own), the learning rate; not
// the constants, nor the pointers and views computed inside it. A lone
// launch is no region, and a read ends one.
// CHECK-LABEL: func.func @step(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: memref<4xf32>, %[[W:[a-z0-9]+]]: memref<64xi8>
// CHECK:         %[[SIG:.*]] = memref.alloca() : memref<3xi64>
// CHECK:         %[[VIEW:.*]] = memref.view %[[W]]
// CHECK:         call @sinter_rt_load_input
// CHECK:         %[[P0:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK:         %[[S0:.*]] = arith.index_cast %[[P0]] : index to i64
// CHECK:         memref.store %[[S0]], %[[SIG]][%c0{{.*}}]
// CHECK:         %[[P1:.*]] = memref.extract_aligned_pointer_as_index %[[VIEW]]
// CHECK:         memref.store %{{.*}}, %[[SIG]][%c1{{.*}}]
// CHECK:         call @sinter_cuda_graph_begin(%c0_i64{{.*}}, %{{.*}}, %c2_i64{{.*}})
// CHECK-NEXT:    gpu.launch_func @kernels::@k
// CHECK:         call @sinter_rt_library_site
// CHECK-NEXT:    call @sinter_cuda_matmul_f32
// CHECK-NEXT:    gpu.launch_func @kernels::@k
// CHECK:         call @sinter_cuda_graph_end(%c0_i64{{.*}})
// CHECK-NEXT:    call @sinter_cuda_read
// CHECK-NEXT:    gpu.launch_func @kernels::@k
// CHECK-NEXT:    %[[LR64:.*]] = call @sinter_rt_hyperparameter
// CHECK-NEXT:    %[[BITS:.*]] = arith.bitcast %[[LR64]] : f64 to i64
// CHECK:         memref.store %[[BITS]], %[[SIG]][%c0{{.*}}]
// CHECK:         %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK:         %[[SA:.*]] = arith.index_cast %[[PA]]
// CHECK:         memref.store %[[SA]], %[[SIG]][%c1{{.*}}]
// CHECK:         %[[PV:.*]] = memref.extract_aligned_pointer_as_index %[[VIEW]]
// CHECK:         %[[SV:.*]] = arith.index_cast %[[PV]]
// CHECK:         memref.store %[[SV]], %[[SIG]][%c2{{.*}}]
// CHECK:         call @sinter_cuda_graph_begin(%c1_i64{{.*}}, %{{.*}}, %c3_i64{{.*}})
// CHECK-NEXT:    arith.truncf %[[LR64]]
// CHECK-NEXT:    gpu.launch_func @kernels::@s
// CHECK-NEXT:    gpu.launch_func @kernels::@s
// CHECK-NEXT:    gpu.launch_func @kernels::@k
// CHECK:         call @sinter_cuda_graph_end(%c1_i64{{.*}})
// CHECK-NEXT:    return
func.func @step(%a: memref<4xf32>, %w: memref<64xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i64 = arith.constant 0 : i64
  %c4_i64 = arith.constant 4 : i64
  %view = memref.view %w[%c0][] : memref<64xi8> to memref<4xf32>
  %null = llvm.mlir.zero : !llvm.ptr
  call @sinter_rt_load_input(%null, %c0_i64) : (!llvm.ptr, i64) -> ()
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
  %pi = memref.extract_aligned_pointer_as_index %view : memref<4xf32> -> index
  %pl = arith.index_cast %pi : index to i64
  %p = llvm.inttoptr %pl : i64 to !llvm.ptr
  call @sinter_rt_library_site(%c0_i64) : (i64) -> ()
  call @sinter_cuda_matmul_f32(%p, %p, %p, %c4_i64, %c4_i64, %c4_i64, %c4_i64, %c0_i64, %null) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, !llvm.ptr) -> ()
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%view : memref<4xf32>)
  call @sinter_cuda_read(%null, %null, %c0_i64, %c4_i64) : (!llvm.ptr, !llvm.ptr, i64, i64) -> ()
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
  %lr64 = call @sinter_rt_hyperparameter(%c0_i64) : (i64) -> f64
  %lr = arith.truncf %lr64 : f64 to f32
  gpu.launch_func @kernels::@s blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>, %lr : f32)
  gpu.launch_func @kernels::@s blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%view : memref<4xf32>, %lr : f32)
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
  return
}

// A private function that only queues device work is part of its callers'
// regions (one graph for the whole layer), not a region of its own; the
// micro-batch index the loop passes in is part of the signature, so each
// micro-batch would replay its own graph.
// CHECK-LABEL: func.func private @layer(
// CHECK-NOT:     sinter_cuda_graph
// CHECK:         return
func.func private @layer(%x: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
  return
}
// CHECK-LABEL: func.func @loop(
// CHECK:         scf.for %[[I:.*]] =
// CHECK:           call @sinter_rt_load_input
// CHECK:           %[[IS:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:           memref.store %[[IS]], %{{.*}}[%c1{{.*}}]
// CHECK:           arith.bitcast %{{.*}} : f32 to i32
// CHECK:           call @sinter_cuda_graph_begin(%c2_i64{{.*}}, %{{.*}}, %c3_i64{{.*}})
// CHECK-NEXT:      call @layer
// CHECK-NEXT:      gpu.launch_func @kernels::@k
// CHECK-NEXT:      gpu.launch_func @kernels::@s
// CHECK:           call @sinter_cuda_graph_end(%c2_i64{{.*}})
// CHECK-NEXT:    }
func.func @loop(%x: memref<4xf32>, %n: index, %lr: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0_i64 = arith.constant 0 : i64
  %null = llvm.mlir.zero : !llvm.ptr
  scf.for %i = %c0 to %n step %c1 {
    func.call @sinter_rt_load_input(%null, %c0_i64) : (!llvm.ptr, i64) -> ()
    func.call @layer(%x) : (memref<4xf32>) -> ()
    gpu.launch_func @kernels::@k blocks in (%i, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
    gpu.launch_func @kernels::@s blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>, %lr : f32)
  }
  return
}

// A public function is a step the runtime calls: its own regions, even
// when it only queues device work; a call of it (or of a private function
// that queues nothing) is host work to its caller.
// CHECK-LABEL: func.func @public_work(
// CHECK:         call @sinter_cuda_graph_begin(%c3_i64
// CHECK-LABEL: func.func private @nothing(
// CHECK-LABEL: func.func @caller(
// CHECK-NOT:     sinter_cuda_graph
// CHECK:         return
func.func @public_work(%x: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
  return
}
func.func private @nothing(%x: memref<4xf32>) {
  return
}
func.func @caller(%x: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  func.call @public_work(%x) : (memref<4xf32>) -> ()
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32>)
  func.call @nothing(%x) : (memref<4xf32>) -> ()
  return
}

// A buffer of a dynamic layout is not settled by its pointer: no region.
// CHECK-LABEL: func.func @dynamic(
// CHECK-NOT:     sinter_cuda_graph
func.func @dynamic(%x: memref<4xf32, strided<[1], offset: ?>>, %y: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<4xf32>)
  gpu.launch_func @kernels::@d blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<4xf32, strided<[1], offset: ?>>)
  return
}
}
