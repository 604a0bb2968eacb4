// RUN: sinter-opt %s -split-input-file -verify-diagnostics

// The sinter dialect owns the sinter.* attributes: it refuses a name it does
// not know, a value of the wrong class, and a place the attribute does not
// belong.

// expected-error @+1 {{has unknown attribute 'sinter.phaze'}}
func.func @misspelled() attributes {sinter.phaze = "train"} {
  return
}

// -----

// expected-error @+1 {{'sinter.phase' must be StringAttr, not 3 : i64}}
func.func @wrong_class() attributes {sinter.phase = 3} {
  return
}

// -----

// expected-error @+1 {{'sinter.param' must be StringAttr}}
func.func @wrong_arg_class(%w: tensor<4xf32> {sinter.param = 1.0 : f32}) {
  return
}

// -----

// expected-error @+1 {{'sinter.param' does not belong on a function result}}
func.func @param_as_result() -> (tensor<4xf32> {sinter.param = "w"}) {
  %0 = tensor.empty() : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'sinter.config' does not belong on a function}}
func.func @config_on_function() attributes {sinter.config = "steps: 1"} {
  return
}

// -----

// expected-error @+1 {{'sinter.phase' does not belong on a module}}
module attributes {sinter.phase = "train"} {
  func.func @f() {
    return
  }
}

// -----

func.func @on_an_op() {
  // expected-error @+1 {{'sinter.workspace' does not belong on an operation}}
  %0 = memref.alloc() {sinter.workspace} : memref<4xi8>
  memref.dealloc %0 : memref<4xi8>
  return
}
