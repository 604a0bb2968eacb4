//===- GraphDialect.td - The Sinter graph dialect ----------*- tablegen -*-===//
//
// The `graph` dialect: a Sinter model as a graph of tensor operations.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_GRAPH_DIALECT_TD
#define SINTER_GRAPH_DIALECT_TD

include "mlir/IR/OpBase.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::sinter::graph";
  let summary = "Model-level tensor operations of a Sinter program";
  let description = [{
    The `graph` dialect is what the Sinter frontend emits: one `graph.model`
    per model of a `.sn` file, holding its inputs, parameters, states, the
    forward computation, the loss, the metrics and the state updates. Every
    operation of LANGUAGE.md section 7 is one op here, so the dialect is the
    contract between the frontend and the compiler passes (autodiff, training
    step, distribution, lowering).

    Values are ranked tensors (`RankedTensorType`) with element types `f64`,
    `f32`, `bf16`, `f16`, `i64`, `i32` and `i1` (the language's `bool`). A
    dimension the frontend only knows symbolically (the micro-batch size `B`,
    a sequence length `T` left unbound) is dynamic (`?`).

    Result shapes and element types follow from the operands and attributes
    through the rules of `ShapeRules.h`, the same rules the frontend applies
    to symbolic shapes. Ops whose result type follows implement
    `InferTypeOpInterface`; the verifier accepts a declared result type that
    agrees with the inferred one up to dynamic dimensions, and an invalid op
    reports the rule's explanation with the operand shapes. Ops whose result
    type does not follow (`reshape`, `cast`, `arange`, `one_hot`, `constant`,
    `input`, `param`, `state`) check it in their verifier.

    Inherent attributes are plain builtin attributes (`StringAttr`,
    `IntegerAttr` of i64, `FloatAttr` of f64, `BoolAttr`, `DenseI64ArrayAttr`,
    `DenseF64ArrayAttr`, `ElementsAttr`), so ops may be created generically
    from an `OperationState`.
  }];
  let hasConstantMaterializer = 1;
}

#endif // SINTER_GRAPH_DIALECT_TD
