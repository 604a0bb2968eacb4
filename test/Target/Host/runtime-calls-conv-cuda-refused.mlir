// RUN: sinter-opt %s -sinter-runtime-calls -split-input-file -verify-diagnostics

// cuDNN's calls take NCHW activations and write a kernel gradient: a
// channels-last convolution or an accumulating kernel gradient (the CPU's
// forms) reaching the CUDA target is refused, not called wrongly.

module attributes {sinter.device = "cuda"} {
func.func @channels_last(%x: memref<2x8x8x3xf32>, %w: memref<8x3x3x3xf32>,
                         %y: memref<2x4x4x8xf32>) {
  // expected-error @below {{the device's library has no such convolution}}
  train.conv2d_forward %x, %w into %y {channels_last, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x8x8x3xf32>, memref<8x3x3x3xf32> into memref<2x4x4x8xf32>
  return
}
}

// -----

module attributes {sinter.device = "cuda"} {
func.func @accumulating(%x: memref<2x3x8x8xf32>, %dy: memref<2x8x4x4xf32>,
                        %dw: memref<8x3x3x3xf32>) {
  // expected-error @below {{the device's library has no such convolution}}
  train.conv2d_backward_weights %x, %dy into %dw {accumulate, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x3x8x8xf32>, memref<2x8x4x4xf32> into memref<8x3x3x3xf32>
  return
}
}
