// RUN: sinter-opt %s -sinter-cuda-launches-on-host=all -verify-diagnostics

// A whole step run on the host (sinterc --cuda-on-host) needs every kernel
// to run there: a launch whose threads meet where the host cannot order
// them is an error at the launch, not a kernel left for a GPU.
func.func @shuffled(%in: memref<32xf32>, %out: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  // expected-error @+1 {{this kernel's threads meet in a way the host cannot run in order}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %v = memref.load %in[%tx] : memref<32xf32>
    %offset = arith.constant 1 : i32
    %width = arith.constant 32 : i32
    %s, %valid = gpu.shuffle xor %v, %offset, %width : f32
    memref.store %s, %out[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}
