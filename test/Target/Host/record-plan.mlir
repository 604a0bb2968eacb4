// RUN: sinter-opt %s -sinter-record-plan -split-input-file -verify-diagnostics | FileCheck %s

// Each step (a function with `sinter.phase`) gets its buffer plan, a
// serialized sinter.plan.Step, as `sinter.plan`: the runtime allocates,
// initialises and feeds the buffers from it, in the order the entry point
// takes them. The checks read the plan's wire bytes a field at a time, from
// each buffer's name (field 1) on, and skip the messages' lengths.
//
// Arguments come first, then results. A result that updates an argument in
// place is that argument's buffer and has no entry; a state read and a state
// written share a name but not a kind.
// CHECK-LABEL: func.func @mlp(
// Model and phase:
// CHECK-SAME:    sinter.plan = "\0A\03mlp\12\05train
// Input "x": INPUT (0), F32 (1), shape 4x8:
// CHECK-SAME:    \0A\01x\10\00\18\01 \04 \08
// Input "t": INPUT, I32 (5), shape 4, value bound 10:
// CHECK-SAME:    \0A\01t\10\00\18\05 \048\0A
// Param "w": PARAM (1), F32, shape 8x2, init "normal" with args 0.0 and 0.5:
// CHECK-SAME:    \0A\01w\10\01\18\01 \08 \02*\06normal1\00\00\00\00\00\00\00\001\00\00\00\00\00\00\E0?
// State "bn.mean" read: STATE (2):
// CHECK-SAME:    \0A\07bn.mean\10\02\18\01 \02
// Loss: LOSS (3), rank 0:
// CHECK-SAME:    \0A\04loss\10\03\18\01
// Gradient of "w": GRADIENT (8):
// CHECK-SAME:    \0A\01w\10\08\18\01 \08 \02
// Nothing for the in-place update of "w":
// CHECK-NOT:     \0A\01w
// State "bn.mean" written: STATE_OUT (5):
// CHECK-SAME:    \0A\07bn.mean\10\05\18\01 \02
// One bucket holding "w", then the optimizer, and nothing after it:
// CHECK-SAME:    \22\03\0A\01w*\03sgd"
func.func @mlp(%x: tensor<4x8xf32> {sinter.input = "x"},
               %t: tensor<4xi32> {sinter.input = "t", sinter.value_bound = 10 : i64},
               %w: tensor<8x2xf32> {sinter.param = "w", sinter.init = "normal",
                                    sinter.init_args = array<f64: 0.0, 0.5>},
               %mean: tensor<2xf32> {sinter.state = "bn.mean"})
    -> (tensor<f32> {sinter.loss = "loss"},
        tensor<8x2xf32> {sinter.gradient = "w"},
        tensor<8x2xf32> {sinter.updates = 2 : i64},
        tensor<2xf32> {sinter.state = "bn.mean"})
    attributes {sinter.phase = "train", sinter.optimizer = "sgd",
                sinter.buckets = [["w"]]} {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %x[%c0, %c0] : tensor<4x8xf32>
  %loss = tensor.from_elements %v : tensor<f32>
  return %loss, %w, %w, %mean : tensor<f32>, tensor<8x2xf32>, tensor<8x2xf32>, tensor<2xf32>
}

// The eval step's symbol is `<model>.eval`; its plan names the model alone.
// An output is OUTPUT (6).
// CHECK-LABEL: func.func @mlp.eval(
// CHECK-SAME:    sinter.plan = "\0A\03mlp\12\04eval
// CHECK-SAME:    \0A\01x\10\00\18\01 \04 \08
// CHECK-SAME:    \0A\01y\10\06\18\01 \04 \02"
func.func @mlp.eval(%x: tensor<4x8xf32> {sinter.input = "x"})
    -> (tensor<4x2xf32> {sinter.output = "y"}) attributes {sinter.phase = "eval"} {
  %y = tensor.extract_slice %x[0, 0] [4, 2] [1, 1] : tensor<4x8xf32> to tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// A function that is not a step gets no plan, even with dynamic shapes and
// unnamed buffers, which a step may not have.
// CHECK-LABEL: func.func @helper(
// CHECK-NOT:   sinter.plan
// CHECK:       return
func.func @helper(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// -----

// The runtime allocates every buffer once, before the first step.
// expected-error @below {{a step's buffers need static shapes, got 'tensor<?x8xf32>'}}
func.func @dynamic(%x: tensor<?x8xf32> {sinter.input = "x"}) attributes {sinter.phase = "eval"} {
  return
}

// -----

// The plan has no dtype for i8.
// expected-error @below {{unsupported element type 'tensor<4xi8>'}}
func.func @bytes(%x: tensor<4xi8> {sinter.input = "x"}) attributes {sinter.phase = "eval"} {
  return
}

// -----

// The runtime finds every buffer by name, results included.
// expected-error @below {{a step's argument or result has no sinter name}}
func.func @unnamed(%x: tensor<4xf32> {sinter.input = "x"}) -> tensor<4xf32>
    attributes {sinter.phase = "eval"} {
  return %x : tensor<4xf32>
}
