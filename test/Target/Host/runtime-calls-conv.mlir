// RUN: sinter-opt %s -sinter-runtime-calls | FileCheck %s

// The CPU's convolution and its gradients become oneDNN's primitives: the
// op's three buffers, then the forward convolution's input [n, c, h, w],
// kernel [o, kh, kw] and output [oh, ow] sizes, its strides, dilations and
// paddings.

// CHECK-LABEL: func.func @forward(
// CHECK:         call @sinter_cpu_conv2d_f32(%{{.+}}, %{{.+}}, %{{.+}}, %c2_i64, %c3_i64, %c8_i64, %c8_i64_{{[0-9]+}}, %c8_i64_{{[0-9]+}}, %c3_i64_{{[0-9]+}}, %c3_i64_{{[0-9]+}}, %c4_i64, %c4_i64_{{[0-9]+}}, %c2_i64_{{[0-9]+}}, %c2_i64_{{[0-9]+}}, %c1_i64, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}})
// CHECK-NOT:     train.
func.func @forward(%x: memref<2x3x8x8xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x4x4xf32>) {
  train.conv2d_forward %x, %w into %y {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x3x8x8xf32>, memref<8x3x3x3xf32> into memref<2x8x4x4xf32>
  return
}

// CHECK-LABEL: func.func @grads(
// CHECK:         call @sinter_cpu_conv2d_backward_data_f32(%{{.+}}, %{{.+}}, %{{.+}}, %c2_i64, %c3_i64, %c8_i64, %c8_i64_{{[0-9]+}}, %c8_i64_{{[0-9]+}}, %c3_i64_{{[0-9]+}}, %c3_i64_{{[0-9]+}}, %c4_i64, %c4_i64_{{[0-9]+}}, %c2_i64_{{[0-9]+}}, %c2_i64_{{[0-9]+}}, %c1_i64, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}})
// CHECK:         call @sinter_cpu_conv2d_backward_weights_f32(
// CHECK-NOT:     train.
func.func @grads(%dy: memref<2x8x4x4xf32>, %w: memref<8x3x3x3xf32>, %x: memref<2x3x8x8xf32>,
                 %dx: memref<2x3x8x8xf32>, %dw: memref<8x3x3x3xf32>) {
  train.conv2d_backward_data %dy, %w into %dx {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x8x4x4xf32>, memref<8x3x3x3xf32> into memref<2x3x8x8xf32>
  train.conv2d_backward_weights %x, %dy into %dw {stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x3x8x8xf32>, memref<2x8x4x4xf32> into memref<8x3x3x3xf32>
  return
}

// Channels-last activations call the nhwc functions with the sizes in NCHW
// order (x [2, 8, 8, 3] is n 2, c 3, h 8, w 8); a kernel gradient that
// accumulates calls the function that adds into dw, in either layout.
// CHECK-LABEL: func.func @channels_last_and_added(
// CHECK:         call @sinter_cpu_conv2d_nhwc_f32(%{{.+}}, %{{.+}}, %{{.+}}, %c2_i64, %c3_i64, %c8_i64, %c8_i64_{{[0-9]+}}, %c8_i64_{{[0-9]+}}, %c3_i64_{{[0-9]+}}, %c3_i64_{{[0-9]+}}, %c4_i64, %c4_i64_{{[0-9]+}},
// CHECK:         call @sinter_cpu_conv2d_nhwc_backward_weights_add_f32(
// CHECK:         call @sinter_cpu_conv2d_backward_weights_add_f32(
// CHECK-NOT:     train.
func.func @channels_last_and_added(%x: memref<2x8x8x3xf32>, %w: memref<8x3x3x3xf32>,
                                   %y: memref<2x4x4x8xf32>, %dw: memref<8x3x3x3xf32>,
                                   %xc: memref<2x3x8x8xf32>, %dyc: memref<2x8x4x4xf32>) {
  train.conv2d_forward %x, %w into %y {channels_last, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x8x8x3xf32>, memref<8x3x3x3xf32> into memref<2x4x4x8xf32>
  train.conv2d_backward_weights %x, %y into %dw {accumulate, channels_last, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x8x8x3xf32>, memref<2x4x4x8xf32> into memref<8x3x3x3xf32>
  train.conv2d_backward_weights %xc, %dyc into %dw {accumulate, stride = array<i64: 2, 2>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x3x8x8xf32>, memref<2x8x4x4xf32> into memref<8x3x3x3xf32>
  return
}

// A grouped convolution calls the grouped functions, the number of groups
// last (w [8, 1, 3, 3]: 8 groups of one input channel, depthwise).
// CHECK-LABEL: func.func @grouped(
// CHECK:         call @sinter_cpu_conv2d_grouped_nhwc_f32(%{{.+}}, %{{.+}}, %{{.+}}, %c2_i64, %c8_i64, %c8_i64_{{[0-9]+}}, %c8_i64_{{[0-9]+}}, %c8_i64_{{[0-9]+}}, %c3_i64, %c3_i64_{{[0-9]+}}, %c8_i64_{{[0-9]+}}, %c8_i64_{{[0-9]+}}, %c1_i64, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}}, %c1_i64_{{[0-9]+}}, %c8_i64_{{[0-9]+}})
// CHECK:         call @sinter_cpu_conv2d_grouped_backward_weights_add_f32({{.*}}, %c8_i64_{{[0-9]+}})
// CHECK-NOT:     train.
func.func @grouped(%x: memref<2x8x8x8xf32>, %w: memref<8x1x3x3xf32>, %y: memref<2x8x8x8xf32>,
                   %xc: memref<2x8x8x8xf32>, %dyc: memref<2x8x8x8xf32>, %dw: memref<8x1x3x3xf32>) {
  train.conv2d_forward %x, %w into %y {channels_last, groups = 8 : i64, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x8x8x8xf32>, memref<8x1x3x3xf32> into memref<2x8x8x8xf32>
  train.conv2d_backward_weights %xc, %dyc into %dw {accumulate, groups = 8 : i64, stride = array<i64: 1, 1>, padding = array<i64: 1, 1>, dilation = array<i64: 1, 1>}
      : memref<2x8x8x8xf32>, memref<2x8x8x8xf32> into memref<8x1x3x3xf32>
  return
}

// A pooling and its gradient call the CPU's pooling functions with the
// NCHW sizes (x [2, 8, 8, 3] channels last is n 2, c 3, h 8, w 8), the
// result's [oh, ow], the window, whether it takes the maximum, and the
// layout.
// CHECK-LABEL: func.func @pooling(
// CHECK:         call @sinter_cpu_pool2d_f32(%{{.+}}, %{{.+}}, %c2_i64, %c3_i64, %c8_i64, %c8_i64_{{[0-9]+}}, %c4_i64, %c4_i64_{{[0-9]+}}, %c2_i64_{{[0-9]+}}, %c2_i64_{{[0-9]+}}, %c2_i64_{{[0-9]+}}, %c2_i64_{{[0-9]+}}, %c0_i64, %c0_i64_{{[0-9]+}}, %c1_i64, %c1_i64_{{[0-9]+}})
// CHECK:         call @sinter_cpu_pool2d_backward_f32(%{{.+}}, %{{.+}}, %{{.+}}, %c2_i64{{.*}}, %c0_i64{{.*}}, %c0_i64_{{[0-9]+}})
// CHECK-NOT:     train.
func.func @pooling(%x: memref<2x8x8x3xf32>, %y: memref<2x4x4x3xf32>,
                   %xc: memref<2x3x8x8xf32>, %dy: memref<2x3x4x4xf32>, %dx: memref<2x3x8x8xf32>) {
  train.pool2d_forward %x into %y {channels_last, kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, max = true}
      : memref<2x8x8x3xf32> into memref<2x4x4x3xf32>
  train.pool2d_backward %xc, %dy into %dx {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, padding = array<i64: 0, 0>, max = false}
      : memref<2x3x8x8xf32>, memref<2x3x4x4xf32> into memref<2x3x8x8xf32>
  return
}
