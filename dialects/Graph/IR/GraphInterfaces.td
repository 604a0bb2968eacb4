//===- GraphInterfaces.td - Interfaces of the graph dialect -*- tablegen -*-===//
#ifndef SINTER_GRAPH_INTERFACES_TD
#define SINTER_GRAPH_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Graph_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let description = [{
    A differentiable graph op: given the gradients of the loss with respect
    to its results, it builds the gradients with respect to its operands
    (its vector-Jacobian product) out of graph ops, at the builder's
    insertion point, with the op's own location. `graph-autodiff` calls it in
    reverse program order.
  }];
  let cppNamespace = "::sinter::graph";
  let methods = [
    InterfaceMethod<[{
        Appends one gradient per operand to `operandGrads`: a value of the
        operand's type, or null for an operand that has no gradient (integer
        ids, class targets, conditions). `resultGrads` has one entry per
        result, null where the loss does not depend on that result.
      }],
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

def Graph_Differentiable : DeclareOpInterfaceMethods<Graph_GradientOpInterface>;

#endif // SINTER_GRAPH_INTERFACES_TD
