//===- GraphOps.td - Operations of the graph dialect -------*- tablegen -*-===//
//
// One op per operation of LANGUAGE.md section 7, plus the ops that structure
// a model (inputs, parameters, states, loss, metrics, state updates).
//
// Result shapes come from ShapeRules.h; see GraphTypeInference.cpp for the inference.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_GRAPH_OPS_TD
#define SINTER_GRAPH_OPS_TD

include "dialects/Graph/IR/GraphDialect.td"
include "dialects/Graph/IR/GraphInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Graph_FloatType : AnyTypeOf<[F64, F32, BF16, F16], "f64, f32, bf16 or f16">;
def Graph_IntType : AnyTypeOf<[I64, I32], "i64 or i32">;
def Graph_NumericType : AnyTypeOf<[F64, F32, BF16, F16, I64, I32],
                                  "f64, f32, bf16, f16, i64 or i32">;
def Graph_ElementType : AnyTypeOf<[F64, F32, BF16, F16, I64, I32, I1],
                                  "f64, f32, bf16, f16, i64, i32 or i1">;

def Graph_Tensor : RankedTensorOf<[Graph_ElementType]>;
def Graph_NumericTensor : RankedTensorOf<[Graph_NumericType]>;
def Graph_FloatTensor : RankedTensorOf<[Graph_FloatType]>;
def Graph_IntTensor : RankedTensorOf<[Graph_IntType]>;
def Graph_BoolTensor : RankedTensorOf<[I1]>;
def Graph_FloatScalar : TensorRankOf<[Graph_FloatType], [0]>;
def Graph_StaticTensor : RankedTensorOf<[Graph_ElementType], [HasStaticShapePred],
                                        "statically shaped tensor">;
def Graph_StaticFloatTensor : RankedTensorOf<[Graph_FloatType], [HasStaticShapePred],
                                             "statically shaped tensor">;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

/// A string attribute restricted to `values`.
class Graph_StrOneOf<list<string> values> : AttrConstraint<
    CPred<"::llvm::is_contained(::llvm::ArrayRef<::llvm::StringRef>{"
          # !interleave(!foreach(v, values, "\"" # v # "\""), ", ")
          # "}, ::llvm::cast<::mlir::StringAttr>($_self).getValue())">,
    "whose value is one of " # !interleave(values, ", ")>;
class Graph_StrEnumAttr<list<string> values>
    : ConfinedAttr<StrAttr, [Graph_StrOneOf<values>]>;

def Graph_PhaseAttr : Graph_StrEnumAttr<["train", "eval"]>;
def Graph_InitAttr : Graph_StrEnumAttr<[
    "zeros", "ones", "constant", "normal", "uniform", "trunc_normal",
    "kaiming_uniform", "kaiming_normal", "xavier_uniform"]>;
def Graph_PredicateAttr : Graph_StrEnumAttr<["lt", "le", "gt", "ge", "eq", "ne"]>;
def Graph_ApproximateAttr : Graph_StrEnumAttr<["none", "tanh"]>;
def Graph_ReductionAttr : Graph_StrEnumAttr<["mean", "sum", "none"]>;

/// [0, 1): dropout probabilities and label smoothing.
def Graph_InUnitInterval : AttrConstraint<
    And<[CPred<"::llvm::cast<::mlir::FloatAttr>($_self).getValueAsDouble() >= 0.0">,
         CPred<"::llvm::cast<::mlir::FloatAttr>($_self).getValueAsDouble() < 1.0">]>,
    "whose value is in [0, 1)">;
def Graph_UnitIntervalAttr : ConfinedAttr<F64Attr, [Graph_InUnitInterval]>;

def Graph_PositiveI64Attr : ConfinedAttr<I64Attr, [IntPositive]>;
/// (height, width) pairs of the 2-D ops.
def Graph_PairAttr : ConfinedAttr<DenseI64ArrayAttr, [DenseArrayCount<2>]>;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

/// Runs the result type inference in the op's verifier and compares the
/// declared result types with it, so that an invalid op reports one clear
/// error: the shape rule's explanation or the two types (GraphOps.h).
def Graph_VerifyInference : NativeOpTrait<"VerifyInference"> {
  let cppNamespace = "::sinter::graph::OpTrait";
}

/// An op whose result types follow from its operands and attributes. The
/// declared result types must agree with the inferred ones up to dynamic
/// dimensions. The printed form is
/// `%r = graph.op %a, %b {attrs} : (type(a), type(b)) -> type(r)`.
class Graph_InferOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits, [
        Graph_VerifyInference,
        InferTypeOpAdaptorBase<[{
          static bool isCompatibleReturnTypes(::mlir::TypeRange lhs,
                                              ::mlir::TypeRange rhs) {
            return ::sinter::graph::areCompatibleResultTypes(lhs, rhs);
          }
        }]>])> {
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
}

/// The head of an out-of-class `inferReturnTypes` definition; families of
/// ops append a body that calls a shared helper of GraphOps.cpp.
defvar Graph_InferSignature = [{
  ::llvm::LogicalResult $cppClass::inferReturnTypes(
      ::mlir::MLIRContext *context, ::std::optional<::mlir::Location> location,
      Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &types)
}];

//===----------------------------------------------------------------------===//
// Structure
//===----------------------------------------------------------------------===//

def Graph_ModelOp : Graph_Op<"model", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator]> {
  let summary = "A trainable program: inputs, parameters, computation, loss";
  let description = [{
    One `model` of a `.sn` file, built for one phase. The single block (no
    arguments, no terminator) holds the model's `graph.input`, `graph.param`
    and `graph.state` declarations, its computation, and its `graph.loss`,
    `graph.metric` and `graph.state_update` ops.

    Constraints:
    - `phase` is `"train"` or `"eval"`;
    - at most one `graph.loss`;
    - parameter and state names (one namespace: they are checkpoint keys),
      input names and metric names are each unique in the model;
    - every `graph.state_update` names a `graph.state` of the model, with a
      compatible type, and no state is updated twice.

    Example:
    ```mlir
    graph.model @mlp phase "train" {
      %x = graph.input "x" : tensor<?x64xf32>
      ...
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Graph_PhaseAttr:$phase);
  let regions = (region SizedRegion<1>:$bodyRegion);
  let assemblyFormat =
      "$sym_name `phase` $phase attr-dict-with-keyword $bodyRegion";
  let skipDefaultBuilders = 1;
  let builders = [
    /// Builds a model with an empty body block.
    OpBuilder<(ins "::llvm::StringRef":$symName, "::llvm::StringRef":$phase)>
  ];
  let hasRegionVerifier = 1;
}

def Graph_InputOp : Graph_Op<"input", [
    HasParent<"ModelOp">,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "A per-sample input fed from the data set";
  let description = [{
    The tensor the data loader feeds under `name` (LANGUAGE.md `input`). Its
    leading dimension is the micro-batch size, usually dynamic. Directly
    inside a `graph.model`; input names are unique in the model.

    Example: `%x = graph.input "x" : tensor<?x64xf32>`
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

/// graph.param and graph.state: a named tensor with an initialiser.
class Graph_InitializedOp<string mnemonic, Type resultType>
    : Graph_Op<mnemonic, [
        HasParent<"ModelOp">,
        DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let arguments = (ins StrAttr:$name, Graph_InitAttr:$init,
                       DenseF64ArrayAttr:$init_args);
  let results = (outs resultType:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

defvar Graph_InitDescription = [{
    `init` names the initialiser of LANGUAGE.md section 6 and `init_args`
    holds its arguments, in order: `zeros` and `ones` take none, `constant`
    one (the value), `normal` two (mean, std), `uniform` two (lo, hi),
    `trunc_normal` four (mean, std, a, b), `kaiming_uniform` two (fan_in, a),
    `kaiming_normal` two (fan_in, gain), `xavier_uniform` two (fan_in,
    fan_out). The verifier checks the count. The shape is fully static, and
    the name, a checkpoint key, is unique among the parameters and states of
    the model.
}];

def Graph_ParamOp : Graph_InitializedOp<"param", Graph_StaticFloatTensor> {
  let summary = "A trainable tensor";
  let description = !strconcat([{
    A trainable parameter named `name` (the dotted, stable name of
    LANGUAGE.md section 5). Directly inside a `graph.model`; floating point.
  }], Graph_InitDescription, [{
    Example:
    ```mlir
    %w = graph.param "fc1.weight" {init = "kaiming_uniform",
        init_args = array<f64: 64.0, 2.2360679774997898>} : tensor<256x64xf32>
    ```
  }]);
}

def Graph_StateOp : Graph_InitializedOp<"state", Graph_StaticTensor> {
  let summary = "A non-trainable tensor kept across steps";
  let description = !strconcat([{
    A tensor saved in checkpoints but not trained (running statistics,
    counters), named `name`. Directly inside a `graph.model`; any element
    type. Its new value at the end of a training step is given by a
    `graph.state_update`.
  }], Graph_InitDescription, [{
    Example:
    ```mlir
    %m = graph.state "bn1.running_mean" {init = "zeros",
        init_args = array<f64>} : tensor<16xf32>
    ```
  }]);
}

def Graph_StateUpdateOp : Graph_Op<"state_update", [HasParent<"ModelOp">]> {
  let summary = "The new value of a state at the end of a training step";
  let description = [{
    `NAME <- EXPR` of the language. The enclosing `graph.model` must have a
    `graph.state` named `name` whose type is compatible with the value's
    (equal up to dynamic dimensions), and no other update of it; the model's
    verifier checks this. Ignored in evaluation.

    Example: `graph.state_update "bn1.running_mean", %m : tensor<16xf32>`
  }];
  let arguments = (ins StrAttr:$name, Graph_Tensor:$value);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
}

def Graph_LossOp : Graph_Op<"loss", [HasParent<"ModelOp">]> {
  let summary = "The objective of the model";
  let description = [{
    Marks the objective (LANGUAGE.md section 9): a rank-0 floating-point
    tensor. At most one per `graph.model`.

    Example: `graph.loss %l : tensor<f32>`
  }];
  let arguments = (ins Graph_FloatScalar:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def Graph_MetricOp : Graph_Op<"metric", [HasParent<"ModelOp">]> {
  let summary = "A scalar logged each step";
  let description = [{
    Logs `value` under `name`, averaged over the global batch and not
    differentiated. `value` is a rank-0 floating-point tensor; metric names
    are unique in the model.

    Example: `graph.metric "accuracy", %a : tensor<f32>`
  }];
  let arguments = (ins StrAttr:$name, Graph_FloatScalar:$value);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
}

def Graph_OutputOp : Graph_Op<"output", [HasParent<"ModelOp">]> {
  let summary = "A tensor the step returns, such as predictions";
  let description = [{
    Returns `value` under `name` from the step (the `output` statement of
    the eval phase). Any tensor; output names are unique in the model.

    Example: `graph.output "probs", %p : tensor<32x10xf32>`
  }];
  let arguments = (ins StrAttr:$name, Graph_Tensor:$value);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
}

def Graph_GradientOp : Graph_Op<"gradient", [HasParent<"ModelOp">]> {
  let summary = "The gradient of the loss with respect to a parameter";
  let description = [{
    Made by `graph-autodiff`: `value` is d(loss)/d(param `name`), of the
    parameter's type. The training step consumes it (optimizer updates); a
    program can also write it out (`--gradients`).

    Example: `graph.gradient "fc1.weight", %g : tensor<256x64xf32>`
  }];
  let arguments = (ins StrAttr:$name, Graph_FloatTensor:$value);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
}

def Graph_EmbeddingGradOp : Graph_Op<"embedding_grad", [Pure]> {
  let summary = "The gradient of an embedding table: rows summed by id";
  let description = [{
    `out[v, :] = sum over positions p with ids[p] == v of grad[p, :]`: the
    vector-Jacobian product of `graph.embedding` for its table. `ids` has
    shape `S`, `grad` shape `S + [D]`, the result `[rows, D]` with `grad`'s
    element type; `rows` is the table's row count (the result's first
    dimension).

    Example:
    ```mlir
    %g = graph.embedding_grad %ids, %dy
        : (tensor<8x32xi32>, tensor<8x32x64xf32>) -> tensor<256x64xf32>
    ```
  }];
  let arguments = (ins Graph_IntTensor:$ids, Graph_FloatTensor:$grad);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$ids `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_Conv2dGradInputOp : Graph_Op<"conv2d_grad_input", [Pure]> {
  let summary = "The gradient of conv2d with respect to its input";
  let description = [{
    Given `grad` (the gradient of a `graph.conv2d` result, `[N, O, OH, OW]`)
    and its `weight` (`[O, C, KH, KW]`), the gradient with respect to the
    convolution's input, of the result's type `[N, C, H, W]`. The attributes
    are the convolution's (with `groups`, `weight` is `[O, C / groups, KH,
    KW]`). With `channels_last`, `grad` and the result are NHWC.
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$weight,
                       Graph_PairAttr:$stride, Graph_PairAttr:$padding,
                       Graph_PairAttr:$dilation, UnitAttr:$channels_last,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$grad `,` $weight attr-dict `:` functional-type(operands, results)";
}

def Graph_Conv2dGradWeightOp : Graph_Op<"conv2d_grad_weight", [Pure]> {
  let summary = "The gradient of conv2d with respect to its weight";
  let description = [{
    Given the convolution's `input` (`[N, C, H, W]`) and `grad` (the
    gradient of its result, `[N, O, OH, OW]`), the gradient with respect to
    the weight, of the result's type `[O, C / groups, KH, KW]`. The
    attributes are the convolution's. With `channels_last`, `input` and
    `grad` are NHWC.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$grad,
                       Graph_PairAttr:$stride, Graph_PairAttr:$padding,
                       Graph_PairAttr:$dilation, UnitAttr:$channels_last,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$input `,` $grad attr-dict `:` functional-type(operands, results)";
}

def Graph_ConstantOp : Graph_Op<"constant", [
    ConstantLike, Pure, InferTypeOpAdaptor]> {
  let summary = "A constant tensor";
  let description = [{
    The tensor `value`. The result type is the type of `value` exactly.

    Example: `%c = graph.constant dense<5.000000e-01> : tensor<f32>`
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Graph_BinaryOp<string mnemonic, Type operandType, string what>
    : Graph_InferOp<mnemonic, [Pure, Graph_Differentiable]> {
  let summary = "Elementwise " # what # " with broadcasting";
  let description = [{
    Elementwise }] # what # [{ of `lhs` and `rhs` with NumPy broadcasting.
    Both operands have one element type, which the result keeps; the result
    shape is the broadcast of the operand shapes.

    Example:
    ```mlir
    %z = graph.}] # mnemonic # [{ %x, %y
        : (tensor<4x1xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let extraClassDefinition = Graph_InferSignature # [{ {
    return ::sinter::graph::inferBroadcast(location, getOperationName(),
                                           adaptor.getLhs(), adaptor.getRhs(),
                                           ::mlir::Type(), types);
  }
  }];
}

def Graph_AddOp : Graph_BinaryOp<"add", Graph_NumericTensor, "addition">;
def Graph_SubOp : Graph_BinaryOp<"sub", Graph_NumericTensor, "subtraction">;
def Graph_MulOp : Graph_BinaryOp<"mul", Graph_NumericTensor, "multiplication">;
def Graph_DivOp : Graph_BinaryOp<"div", Graph_FloatTensor,
                                 "(true, floating-point) division">;
def Graph_PowOp : Graph_BinaryOp<"pow", Graph_FloatTensor,
                                 "power (`lhs` to the `rhs`)">;
def Graph_MaximumOp : Graph_BinaryOp<"maximum", Graph_NumericTensor, "maximum">;
def Graph_MinimumOp : Graph_BinaryOp<"minimum", Graph_NumericTensor, "minimum">;

def Graph_CompareOp : Graph_InferOp<"compare", [Pure]> {
  let summary = "Elementwise comparison with broadcasting";
  let description = [{
    Compares `lhs` and `rhs` elementwise with NumPy broadcasting. `predicate`
    is one of `lt le gt ge eq ne`. The operands have one element type (any);
    the result is `i1` with the broadcast shape.

    Example:
    ```mlir
    %b = graph.compare %x, %y {predicate = "lt"}
        : (tensor<4xf32>, tensor<f32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs,
                       Graph_PredicateAttr:$predicate);
  let results = (outs Graph_BoolTensor:$result);
}

def Graph_WhereOp : Graph_InferOp<"where", [Pure, Graph_Differentiable]> {
  let summary = "Elementwise selection with broadcasting";
  let description = [{
    `lhs` where `cond` holds, `rhs` elsewhere. `cond` is `i1`; `lhs` and
    `rhs` have one element type, which the result keeps; the result shape is
    the broadcast of all three shapes.

    Example:
    ```mlir
    %r = graph.where %c, %x, %y
        : (tensor<4x1xi1>, tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Graph_BoolTensor:$cond, Graph_Tensor:$lhs,
                       Graph_Tensor:$rhs);
  let results = (outs Graph_Tensor:$result);
}

class Graph_UnaryOp<string mnemonic, Type operandType, string what>
    : Graph_InferOp<mnemonic, [Pure, Graph_Differentiable]> {
  let summary = "Elementwise " # what;
  let description = [{
    Elementwise }] # what # [{. The result has the operand's type. The
    operand is }] # !if(!eq(operandType, Graph_FloatTensor),
                        "floating point.", "floating point or integer.") # [{

    Example: `%y = graph.}] # mnemonic # [{ %x : (tensor<4xf32>) -> tensor<4xf32>`
  }];
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$result);
  let extraClassDefinition = Graph_InferSignature # [{ {
    types.push_back(adaptor.getInput().getType());
    return ::mlir::success();
  }
  }];
}

def Graph_NegOp : Graph_UnaryOp<"neg", Graph_NumericTensor, "negation">;
def Graph_AbsOp : Graph_UnaryOp<"abs", Graph_NumericTensor, "absolute value">;
def Graph_ReluOp : Graph_UnaryOp<"relu", Graph_NumericTensor, "`max(x, 0)`">;
def Graph_ExpOp : Graph_UnaryOp<"exp", Graph_FloatTensor, "exponential">;
def Graph_LogOp : Graph_UnaryOp<"log", Graph_FloatTensor, "natural logarithm">;
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", Graph_FloatTensor, "square root">;
def Graph_RsqrtOp : Graph_UnaryOp<"rsqrt", Graph_FloatTensor,
                                  "reciprocal square root">;
def Graph_TanhOp : Graph_UnaryOp<"tanh", Graph_FloatTensor, "hyperbolic tangent">;
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", Graph_FloatTensor,
                                    "logistic sigmoid">;
def Graph_SiluOp : Graph_UnaryOp<"silu", Graph_FloatTensor, "`x * sigmoid(x)`">;

def Graph_GeluOp : Graph_UnaryOp<"gelu", Graph_FloatTensor,
                                 "Gaussian error linear unit"> {
  let description = [{
    Elementwise GELU of a floating-point tensor; the result has the operand's
    type. `approximate` is `"none"` (the exact erf form) or `"tanh"`.

    Example:
    ```mlir
    %y = graph.gelu %x {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       Graph_ApproximateAttr:$approximate);
}

def Graph_CastOp : Graph_Op<"cast", [Pure, Graph_Differentiable]> {
  let summary = "Element type conversion";
  let description = [{
    Converts every element to the result's element type (any of the
    dialect's). The result has the operand's shape (equal up to dynamic
    dimensions).

    Example: `%y = graph.cast %x : (tensor<4xi32>) -> tensor<4xf32>`
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat =
      "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra and shape
//===----------------------------------------------------------------------===//

def Graph_MatmulOp : Graph_InferOp<"matmul", [Pure, Graph_Differentiable]> {
  let summary = "Matrix multiplication with broadcast batch dimensions";
  let description = [{
    `lhs @ rhs`: operands of rank 2 or more with one floating-point element
    type; `[..., M, K] @ [..., K, N]` gives `[..., M, N]`, the batch
    dimensions broadcast.

    Example:
    ```mlir
    %y = graph.matmul %x, %w
        : (tensor<?x64xf32>, tensor<64x256xf32>) -> tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs);
  let results = (outs Graph_FloatTensor:$result);
}

def Graph_MatmulTransposedOp : Graph_Op<"matmul_transposed", [Pure]> {
  let summary = "`lhs @ transpose(rhs)` for a 2-D rhs, without the transpose";
  let description = [{
    `[..., M, K] @ transpose([N, K])` gives `[..., M, N]`. Made from
    `graph.matmul %x, (graph.transpose %w)` after differentiation, so that a
    linear layer reads its weight in place instead of copying its transpose
    each step; not differentiable, and not written by the frontend.

    Example:
    ```mlir
    %y = graph.matmul_transposed %x, %w
        : (tensor<8x64xf32>, tensor<256x64xf32>) -> tensor<8x256xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_ReshapeOp : Graph_Op<"reshape", [Pure, Graph_Differentiable]> {
  let summary = "Reinterprets a tensor with another shape";
  let description = [{
    The operand's elements, in row-major order, with the result's shape. The
    element types are equal and the element counts agree (up to dynamic
    dimensions). A `-1` of the language is resolved by the frontend.

    Example: `%y = graph.reshape %x : (tensor<4x6xf32>) -> tensor<2x12xf32>`
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat =
      "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_TransposeOp : Graph_InferOp<"transpose", [Pure, Graph_Differentiable]> {
  let summary = "Permutes the dimensions of a tensor";
  let description = [{
    Result dimension `i` is operand dimension `permutation[i]`.
    `permutation` is a permutation of the operand's axes (negative entries
    count from the end).

    Example:
    ```mlir
    %y = graph.transpose %x {permutation = array<i64: 1, 0>}
        : (tensor<4x6xf32>) -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Graph_Tensor:$result);
}

def Graph_ConcatOp : Graph_InferOp<"concat", [Pure, Graph_Differentiable]> {
  let summary = "Joins tensors along an axis";
  let description = [{
    Concatenates one or more `inputs` of one rank and one element type along
    `axis` (negative counts from the end); the other dimensions agree.

    Example:
    ```mlir
    %y = graph.concat %a, %b {axis = 0 : i64}
        : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
}

def Graph_SliceOp : Graph_InferOp<"slice", [Pure, Graph_Differentiable]> {
  let summary = "A contiguous range along one axis";
  let description = [{
    Elements `[start, end)` of the operand along `axis`; negative `axis`,
    `start` and `end` count from the end of a static dimension. The range
    lies inside the dimension; for a dynamic dimension the bounds are
    non-negative and ordered.

    Example:
    ```mlir
    %y = graph.slice %x {axis = 1 : i64, start = 2 : i64, end = 5 : i64}
        : (tensor<4x8xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$axis, I64Attr:$start,
                       I64Attr:$end);
  let results = (outs Graph_Tensor:$result);
}

def Graph_ArangeOp : Graph_Op<"arange", [Pure]> {
  let summary = "The integers 0, 1, ..., n-1";
  let description = [{
    `arange(n)`: a 1-D `i64` tensor holding `0 .. n-1`, where `n` is the
    result's length (dynamic when `n` is a shape symbol).

    Example: `%i = graph.arange : tensor<8xi64>`
  }];
  let results = (outs TensorRankOf<[I64], [1]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Graph_SymbolicSizeOp : Graph_Op<"symbolic_size", [Pure]> {
  let summary = "A size built from shape symbols, as a scalar";
  let description = [{
    The value `coefficient * S1 * S2 ...` of shape symbols (`B`, `T`, ...)
    used as a number, e.g. the element count that turns a biased variance
    into an unbiased one. Once the symbols are bound it folds to a constant.
    `symbols` is not empty and `coefficient` is positive; the result is a
    rank-0 integer or floating-point tensor.

    Example:
    `%n = graph.symbolic_size {coefficient = 1024 : i64, symbols = ["B"]} : tensor<f32>`
  }];
  let arguments = (ins Graph_PositiveI64Attr:$coefficient, StrArrayAttr:$symbols);
  let results = (outs TensorRankOf<[Graph_NumericType], [0]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Graph_OneHotOp : Graph_Op<"one_hot", [Pure]> {
  let summary = "One-hot encoding of integer ids";
  let description = [{
    `one_hot(ids, num_classes)`: integer `ids` of shape `S` give a
    floating-point tensor of shape `S + [num_classes]`. `num_classes` is
    positive.

    Example:
    ```mlir
    %y = graph.one_hot %ids {num_classes = 10 : i64}
        : (tensor<?xi32>) -> tensor<?x10xf32>
    ```
  }];
  let arguments = (ins Graph_IntTensor:$ids,
                       Graph_PositiveI64Attr:$num_classes);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$ids attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Graph_ReduceOp<string mnemonic, Type operandType, string what>
    : Graph_InferOp<mnemonic, [Pure, Graph_Differentiable]> {
  let summary = "The " # what # " over some axes";
  let description = [{
    The }] # what # [{ of `input` over `axes` (negative entries count from
    the end; each axis at most once; empty means every axis). With
    `keepdim` the reduced axes stay with size 1, otherwise they are dropped.
    The element type is kept. }] #
    !if(!eq(operandType, Graph_FloatTensor), "The input is floating point.",
        "The input is floating point or integer.") # [{

    Example:
    ```mlir
    %s = graph.}] # mnemonic # [{ %x {axes = array<i64: 1>, keepdim = false}
        : (tensor<4x3xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins operandType:$input, DenseI64ArrayAttr:$axes,
                       BoolAttr:$keepdim);
  let results = (outs operandType:$result);
  let extraClassDefinition = Graph_InferSignature # [{ {
    return ::sinter::graph::inferReduce(location, getOperationName(),
                                        adaptor.getInput(), adaptor.getAxes(),
                                        adaptor.getKeepdim(), types);
  }
  }];
}

def Graph_ReduceSumOp : Graph_ReduceOp<"reduce_sum", Graph_NumericTensor, "sum">;
def Graph_ReduceMeanOp : Graph_ReduceOp<"reduce_mean", Graph_FloatTensor, "mean">;
def Graph_ReduceMaxOp : Graph_ReduceOp<"reduce_max", Graph_NumericTensor, "maximum">;
def Graph_ReduceMinOp : Graph_ReduceOp<"reduce_min", Graph_NumericTensor, "minimum">;

class Graph_SoftmaxOp<string mnemonic, string what>
    : Graph_InferOp<mnemonic, [Pure, Graph_Differentiable]> {
  let summary = what # " along an axis";
  let description = [{
    }] # what # [{ of a floating-point tensor along `axis` (negative counts
    from the end; it must name an axis). The result has the operand's type.

    Example:
    ```mlir
    %p = graph.}] # mnemonic # [{ %x {axis = -1 : i64}
        : (tensor<4x10xf32>) -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let extraClassDefinition = Graph_InferSignature # [{ {
    return ::sinter::graph::inferSoftmax(location, getOperationName(),
                                         adaptor.getInput(), adaptor.getAxis(),
                                         types);
  }
  }];
}

def Graph_SoftmaxOp : Graph_SoftmaxOp<"softmax", "Softmax">;
def Graph_LogSoftmaxOp : Graph_SoftmaxOp<"log_softmax", "Log-softmax">;

//===----------------------------------------------------------------------===//
// Neural-network primitives
//===----------------------------------------------------------------------===//

def Graph_Conv2dOp : Graph_InferOp<"conv2d", [Pure, Graph_Differentiable]> {
  let summary = "2-D convolution, NCHW input and OIHW weight";
  let description = [{
    Convolves an NCHW `input` with an OIHW `weight` (one floating-point
    element type). `stride`, `padding` and `dilation` are (height, width)
    pairs: strides and dilations positive, padding non-negative. `groups` is
    positive and divides the output channels; the input has
    `groups * I` channels. The kernel extent fits the padded input.
    With `channels_last` (set by `graph-channels-last`, on the CPU), the
    input and the result are NHWC instead; the weight stays OIHW.

    Example:
    ```mlir
    %y = graph.conv2d %x, %w {dilation = array<i64: 1, 1>, groups = 1 : i64,
                              padding = array<i64: 1, 1>,
                              stride = array<i64: 1, 1>}
        : (tensor<?x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x32x32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                       Graph_PairAttr:$stride, Graph_PairAttr:$padding,
                       Graph_PairAttr:$dilation, I64Attr:$groups,
                       UnitAttr:$channels_last);
  let results = (outs Graph_FloatTensor:$result);
}

class Graph_Pool2dOp<string mnemonic, string what, string padded>
    : Graph_InferOp<mnemonic, [Pure, Graph_Differentiable]> {
  let summary = what # " over 2-D windows, NCHW";
  let description = [{
    The }] # what # [{ over `kernel` windows of an NCHW floating-point
    tensor; padded positions count as }] # padded # [{ (PyTorch's
    defaults). `kernel`, `stride` and `padding` are (height, width) pairs:
    kernel and stride positive, padding non-negative and at most half the
    kernel. The kernel fits the padded input. With `channels_last` (set by
    `graph-channels-last`), the input and the result are NHWC instead.

    Example:
    ```mlir
    %y = graph.}] # mnemonic # [{ %x {kernel = array<i64: 2, 2>,
                             padding = array<i64: 0, 0>,
                             stride = array<i64: 2, 2>}
        : (tensor<?x16x32x32xf32>) -> tensor<?x16x16x16xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_PairAttr:$kernel,
                       Graph_PairAttr:$stride, Graph_PairAttr:$padding,
                       UnitAttr:$channels_last);
  let results = (outs Graph_FloatTensor:$result);
  let extraClassDefinition = Graph_InferSignature # [{ {
    return ::sinter::graph::inferPool2d(location, getOperationName(),
                                        adaptor.getInput(), adaptor.getKernel(),
                                        adaptor.getStride(),
                                        adaptor.getPadding(),
                                        adaptor.getChannelsLast(), types);
  }
  }];
}

def Graph_MaxPool2dOp : Graph_Pool2dOp<"max_pool2d", "maximum", "-inf">;
def Graph_AvgPool2dOp : Graph_Pool2dOp<"avg_pool2d", "average",
                                       "zeros in the average">;

def Graph_Pool2dGradOp : Graph_Op<"pool2d_grad", [Pure]> {
  let summary = "The gradient of max_pool2d or avg_pool2d";
  let description = [{
    Given the pooling's `input` (`[N, C, H, W]`) and `grad` (the gradient of
    its result), the gradient with respect to the input, of the input's type.
    The attributes are the pooling's. With `max`, each window passes its
    gradient to the first position (row-major) holding the window's maximum,
    as PyTorch does; with average, every position of the window receives the
    gradient divided by the full window's size. Overlapping windows add up.
    With `channels_last`, `input`, `grad` and the result are NHWC.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$grad,
                       Graph_PairAttr:$kernel, Graph_PairAttr:$stride,
                       Graph_PairAttr:$padding, BoolAttr:$max,
                       UnitAttr:$channels_last);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$input `,` $grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_GlobalAvgPool2dOp : Graph_InferOp<"global_avg_pool2d", [Pure, Graph_Differentiable]> {
  let summary = "Average over the spatial dimensions, NCHW to [N, C]";
  let description = [{
    The mean over H and W of a rank-4 NCHW floating-point tensor, of shape
    `[N, C]`. With `channels_last`, the input is NHWC.

    Example:
    ```mlir
    %y = graph.global_avg_pool2d %x : (tensor<?x64x8x8xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, UnitAttr:$channels_last);
  let results = (outs Graph_FloatTensor:$result);
}

def Graph_BatchNormStatsOp : Graph_InferOp<"batch_norm_stats", [Pure, Graph_Differentiable]> {
  let summary = "Mean and biased variance over the batch axes";
  let description = [{
    The mean and the biased variance (divided by the count, as batch norm
    normalises) of a floating-point tensor over `axes` (as in the reductions:
    negative entries count from the end, each at most once, empty means every
    axis). Both results have the reduced shape, without the reduced axes, and
    the operand's element type.

    Example:
    ```mlir
    %mean, %var = graph.batch_norm_stats %x {axes = array<i64: 0, 2, 3>}
        : (tensor<?x16x8x8xf32>) -> (tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Graph_FloatTensor:$mean, Graph_FloatTensor:$var);
}

def Graph_BatchNormCountOp : Graph_Op<"batch_norm_count", [Pure, Graph_Differentiable]> {
  let summary = "How many elements batch-norm statistics average over";
  let description = [{
    The number of elements of `input` over `axes` (their sizes multiplied),
    as a rank-0 tensor of the input's element type: the count behind
    `batch_norm_stats`, which the unbiased variance of running statistics
    needs. With statistics synchronized across ranks it is the count over
    all ranks. It has no gradient.

    Example:
    ```mlir
    %n = graph.batch_norm_count %x {axes = array<i64: 0, 2, 3>}
        : (tensor<8x16x8x8xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Graph_FloatScalar:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_BatchNormOp : Graph_Op<"batch_norm", [Pure, Graph_Differentiable]> {
  let summary = "Batch normalization with the batch's statistics, whole";
  let description = [{
    `(x - mean) * weight / sqrt(var + epsilon) + bias` per channel (axis 1)
    of `input` `[N, C, ...]`, with `mean` and `var` the
    `graph.batch_norm_stats` of `input` over every other axis (the variance
    biased), which it also returns. `weight` and `bias` are `[C]`. Made by
    `graph-fuse-batch-norm` from that spelled-out form where the device's
    library normalizes a batch whole (cuDNN on CUDA); autodiff
    differentiates it whole (`graph.batch_norm_grad`).

    Example:
    ```mlir
    %y, %mean, %var = graph.batch_norm %x, %w, %b {epsilon = 1.0e-05 : f64}
        : (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
        -> (tensor<8x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                       Graph_FloatTensor:$bias, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$result, Graph_FloatTensor:$mean,
                      Graph_FloatTensor:$var);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_BatchNormGradOp : Graph_Op<"batch_norm_grad", [Pure,
    AllTypesMatch<["input", "dinput"]>, AllTypesMatch<["weight", "dweight"]>,
    AllTypesMatch<["weight", "dbias"]>]> {
  let summary = "The gradients of a whole batch normalization";
  let description = [{
    The vector-Jacobian product of `graph.batch_norm` (its `input`, `weight`,
    `epsilon` and the `mean` and `var` it returned) for its result's
    gradient `grad`: the gradients of `input` (through the statistics too),
    `weight` and `bias`. Only a target whose library differentiates
    batch-norm itself gets one.

    Example:
    ```mlir
    %dx, %dw, %db = graph.batch_norm_grad %x, %w, %mean, %var, %g
        {epsilon = 1.0e-05 : f64} : tensor<8x16x4x4xf32>, tensor<16xf32>,
        tensor<16xf32>, tensor<16xf32>, tensor<8x16x4x4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                       Graph_FloatTensor:$mean, Graph_FloatTensor:$var,
                       Graph_FloatTensor:$grad, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$dinput, Graph_FloatTensor:$dweight,
                      Graph_FloatTensor:$dbias);
  let assemblyFormat = [{
    $input `,` $weight `,` $mean `,` $var `,` $grad attr-dict `:` type($input) `,`
    type($weight) `,` type($mean) `,` type($var) `,` type($grad)
  }];
  let hasVerifier = 1;
}

def Graph_AllReduceSumOp : Graph_Op<"all_reduce_sum", [
    Graph_Differentiable, SameOperandsAndResultType]> {
  let summary = "The sum of a tensor over every rank of the run";
  let description = [{
    A collective: every rank reaches it in the same order (the identity on
    one rank). Its gradient is the sum of the gradients over the ranks. Not
    `Pure`: it must be neither removed nor merged.

    Example: `%all = graph.all_reduce_sum %mine : tensor<16xf32>`
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Graph_LayerNormStatsOp : Graph_InferOp<"layer_norm_stats", [Pure, Graph_Differentiable]> {
  let summary = "Mean and biased variance over the last axis";
  let description = [{
    The mean and the biased variance of a floating-point tensor of rank 1 or
    more over its last axis. Both results have the operand's shape with the
    last dimension 1, and its element type.

    Example:
    ```mlir
    %mean, %var = graph.layer_norm_stats %x
        : (tensor<?x8x32xf32>) -> (tensor<?x8x1xf32>, tensor<?x8x1xf32>)
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$mean, Graph_FloatTensor:$var);
}

def Graph_EmbeddingOp : Graph_InferOp<"embedding", [Pure, Graph_Differentiable]> {
  let summary = "Rows of a table selected by integer ids";
  let description = [{
    `table[ids]`: integer `ids` of shape `S` and a rank-2 floating-point
    `table` of shape `[V, D]` give `S + [D]`, with the table's element type.

    Example:
    ```mlir
    %e = graph.embedding %ids, %wte
        : (tensor<?x8xi32>, tensor<50x16xf32>) -> tensor<?x8x16xf32>
    ```
  }];
  let arguments = (ins Graph_IntTensor:$ids, Graph_FloatTensor:$table);
  let results = (outs Graph_FloatTensor:$result);
}

def Graph_DropoutOp : Graph_InferOp<"dropout", [Graph_Differentiable]> {
  let summary = "Zeroes elements with probability p (training only)";
  let description = [{
    Zeroes each element with probability `p` and scales the others by
    `1 / (1 - p)`; the identity in evaluation. `p` is in [0, 1); the result
    has the operand's (floating-point) type. The mask is a function of the
    step's random key, `stream` and the element's position, so a dropout and
    its gradient (a dropout of the gradient with the same stream) agree, and
    a resumed run draws the masks it would have drawn. Dropouts with
    different streams draw independent masks. In a repeated block the
    optional i64 scalar `offset` is added to `stream`: each layer's call
    passes its own, so layers draw their own masks. Not `Pure`: two
    dropouts of one value must not be merged.

    Example:
    ```mlir
    %y = graph.dropout %x {p = 1.000000e-01 : f64, stream = 3 : i64}
        : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                       Optional<TensorRankOf<[I64], [0]>>:$offset,
                       Graph_UnitIntervalAttr:$p,
                       DefaultValuedAttr<I64Attr, "0">:$stream);
  let results = (outs Graph_FloatTensor:$result);
}

def Graph_AttentionOp : Graph_InferOp<"attention", [Pure, Graph_Differentiable]> {
  let summary = "Scaled dot-product attention";
  let description = [{
    `softmax(q @ k^T / sqrt(D)) @ v`, causally masked when `causal`. `query`
    `[..., Tq, D]`, `key` `[..., Tk, D]` and `value` `[..., Tk, Dv]` have one
    rank (2 or more), agreeing batch dimensions and one floating-point
    element type; the result is `[..., Tq, Dv]`.

    Example:
    ```mlir
    %y = graph.attention %q, %k, %v {causal = true}
        : (tensor<?x4x8x16xf32>, tensor<?x4x8x16xf32>, tensor<?x4x8x16xf32>)
        -> tensor<?x4x8x16xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$query, Graph_FloatTensor:$key,
                       Graph_FloatTensor:$value, BoolAttr:$causal);
  let results = (outs Graph_FloatTensor:$result);
}

def Graph_AttentionGradOp : Graph_Op<"attention_grad", [Pure,
    AllTypesMatch<["query", "dquery"]>, AllTypesMatch<["key", "dkey"]>,
    AllTypesMatch<["value", "dvalue"]>]> {
  let summary = "The gradients of scaled dot-product attention";
  let description = [{
    The vector-Jacobian product of `graph.attention` (same operands and
    `causal`) for the result's gradient `grad`: the gradients of `query`,
    `key` and `value`. Kept whole where the device's library differentiates
    attention itself (on CUDA, cuDNN's fused attention with compute: BF16,
    Sinter's own fused kernels in f32);
    elsewhere `graph-expand-attention-grad` spells it out, recomputing the
    probabilities.

    Example:
    ```mlir
    %dq, %dk, %dv = graph.attention_grad %q, %k, %v, %g {causal = true}
        : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>,
          tensor<2x4x8x16xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$query, Graph_FloatTensor:$key,
                       Graph_FloatTensor:$value, Graph_FloatTensor:$grad,
                       BoolAttr:$causal);
  let results = (outs Graph_FloatTensor:$dquery, Graph_FloatTensor:$dkey,
                      Graph_FloatTensor:$dvalue);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $grad attr-dict `:` type($query) `,` type($key)
    `,` type($value) `,` type($grad)
  }];
}

def Graph_AttentionQkvOp : Graph_Op<"attention_qkv", [Pure, Graph_Differentiable]> {
  let summary = "Self-attention over one projection that packs q, k and v";
  let description = [{
    `qkv` is `[B, T, 3 * C]`: query, key and value side by side, each `C`
    wide and split into `heads` heads of `C / heads`. `result` is `[B, T,
    C]`, each head's `graph.attention` (causally masked when `causal`) in
    its columns, and `lse` is `[B, heads, T]` in f32: each query's
    log-sum-exp of its scaled (and masked) scores, which the gradient reads instead of
    computing the scores' statistics again. `graph-pack-attention` makes it
    where the device's library attends in these layouts (cuDNN's fused
    attention with strides), in place of the slices, reshapes and
    transposes around `graph.attention`. Static shapes only.

    Example:
    ```mlir
    %y, %lse = graph.attention_qkv %qkv {heads = 4 : i64, causal = true}
        : (tensor<2x64x192xf32>) -> (tensor<2x64x64xf32>, tensor<2x4x64xf32>)
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$qkv, I64Attr:$heads, BoolAttr:$causal);
  let results = (outs Graph_FloatTensor:$result, Graph_FloatTensor:$lse);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_AttentionQkvGradOp : Graph_Op<"attention_qkv_grad", [Pure,
    AllTypesMatch<["qkv", "dqkv"]>]> {
  let summary = "The gradient of self-attention over a packed projection";
  let description = [{
    The vector-Jacobian product of `graph.attention_qkv` (same `qkv`,
    `heads` and `causal`) for its result's gradient `grad`, from the
    `result` and `lse` it gave: the gradient of `qkv`, in its packed
    layout. `lse` has no gradient of its own.

    Example:
    ```mlir
    %dqkv = graph.attention_qkv_grad %qkv, %y, %lse, %dy {heads = 4 : i64, causal = true}
        : tensor<2x64x192xf32>, tensor<2x64x64xf32>, tensor<2x4x64xf32>,
          tensor<2x64x64xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$qkv, Graph_FloatTensor:$result,
                       Graph_FloatTensor:$lse, Graph_FloatTensor:$grad,
                       I64Attr:$heads, BoolAttr:$causal);
  let results = (outs Graph_FloatTensor:$dqkv);
  let assemblyFormat = [{
    $qkv `,` $result `,` $lse `,` $grad attr-dict `:` type($qkv) `,` type($result)
    `,` type($lse) `,` type($grad)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Losses and metrics
//===----------------------------------------------------------------------===//

defvar Graph_ReductionDescription = [{
    `reduction` is `"mean"` or `"sum"` (a rank-0 result) or `"none"` (one
    value per sample).
}];

def Graph_CrossEntropyOp : Graph_InferOp<"cross_entropy", [Pure, Graph_Differentiable]> {
  let summary = "Cross-entropy of logits against class ids";
  let description = !strconcat([{
    Softmax cross-entropy of floating-point `logits` (class axis last) against
    integer `target` holding the other axes (`[B, C]` with `[B]`, `[B, T, V]`
    with `[B, T]`). Targets equal to `ignore_index`, when given, do not
    count. `label_smoothing` is in [0, 1). The result has the logits' element
    type and, for `"none"`, the target's shape.
  }], Graph_ReductionDescription, [{
    Example:
    ```mlir
    %l = graph.cross_entropy %logits, %y {ignore_index = -1 : i64,
        label_smoothing = 0.000000e+00 : f64, reduction = "mean"}
        : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
    ```
  }]);
  let arguments = (ins Graph_FloatTensor:$logits, Graph_IntTensor:$target,
                       Graph_ReductionAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index,
                       Graph_UnitIntervalAttr:$label_smoothing);
  let results = (outs Graph_FloatTensor:$result);
}

def Graph_NllLossOp : Graph_InferOp<"nll_loss", [Pure, Graph_Differentiable]> {
  let summary = "Negative log-likelihood of log-probabilities";
  let description = !strconcat([{
    `-logp[..., target]`: floating-point `logp` (class axis last) against
    integer `target` holding the other axes. Targets equal to
    `ignore_index`, when given, do not count. The result has the element type
    of `logp` and, for `"none"`, the target's shape.
  }], Graph_ReductionDescription, [{
    Example:
    ```mlir
    %l = graph.nll_loss %logp, %y {reduction = "sum"}
        : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
    ```
  }]);
  let arguments = (ins Graph_FloatTensor:$logp, Graph_IntTensor:$target,
                       Graph_ReductionAttr:$reduction,
                       OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$result);
}

class Graph_PairLossOp<string mnemonic, string what>
    : Graph_InferOp<mnemonic, [Pure, Graph_Differentiable]> {
  let summary = what;
  let description = !strconcat([{
    }] # what # [{ of `lhs` against `rhs`, two floating-point tensors of one
    shape and one element type (no broadcasting). The result has that element
    type and, for `"none"`, that shape.
  }], Graph_ReductionDescription, [{
    Example:
    ```mlir
    %l = graph.}] # mnemonic # [{ %x, %t {reduction = "mean"}
        : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<f32>
    ```
  }]);
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs,
                       Graph_ReductionAttr:$reduction);
  let results = (outs Graph_FloatTensor:$result);
  let extraClassDefinition = Graph_InferSignature # [{ {
    return ::sinter::graph::inferPairLoss(location, getOperationName(),
                                          adaptor.getLhs(), adaptor.getRhs(),
                                          adaptor.getReduction(), types);
  }
  }];
}

def Graph_MseLossOp : Graph_PairLossOp<"mse_loss", "Squared error">;
def Graph_L1LossOp : Graph_PairLossOp<"l1_loss", "Absolute error">;
def Graph_BceWithLogitsOp : Graph_PairLossOp<"bce_with_logits",
    "Binary cross-entropy of logits (`lhs`) against probabilities (`rhs`)">;

def Graph_AccuracyOp : Graph_InferOp<"accuracy", [Pure]> {
  let summary = "Fraction of samples whose arg-max class is the target";
  let description = [{
    The fraction of positions where the arg-max of floating-point `logits`
    (class axis last) equals the integer `target`, which holds the other
    axes. The result is a rank-0 `f32` tensor.

    Example:
    ```mlir
    %a = graph.accuracy %logits, %y
        : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$logits, Graph_IntTensor:$target);
  let results = (outs TensorRankOf<[F32], [0]>:$result);
}

#endif // SINTER_GRAPH_OPS_TD
