//===- GraphOps.h - Operations of the graph dialect -------------*- C++ -*-===//
//
// The graph ops, and the conversions between MLIR tensor types and the
// plain-C++ shapes of ShapeRules.h.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_GRAPH_GRAPHOPS_H
#define SINTER_GRAPH_GRAPHOPS_H

#include "dialects/Graph/IR/GraphDialect.h"
#include "dialects/Graph/IR/ShapeRules.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace sinter::graph {

/// The shape of `type`; a dynamic dimension becomes shape::Dim::unknown().
shape::Shape toShape(mlir::RankedTensorType type);
/// The tensor type of `shape` with `elementType`. Unknown and symbolic
/// dimensions (B, T, ...) become dynamic.
mlir::RankedTensorType toTensorType(const shape::Shape &shape,
                                    mlir::Type elementType);
/// The language's dtype of an element type; nullopt for types outside the
/// dialect (i1 is `bool`).
std::optional<shape::DType> toDType(mlir::Type elementType);
/// The element type of a dtype (`bool` is i1, integers are signless).
mlir::Type toElementType(mlir::MLIRContext *context, shape::DType dtype);

/// True when both lists hold ranked tensor types that agree pairwise in
/// element type and rank, with equal sizes wherever both are static.
bool areCompatibleResultTypes(mlir::TypeRange lhs, mlir::TypeRange rhs);

namespace detail {
/// Reports `op`'s declared result types unless they are compatible with the
/// `inferred` ones.
mlir::LogicalResult verifyInferredTypes(mlir::Operation *op,
                                        mlir::TypeRange inferred);
} // namespace detail

namespace OpTrait {
/// Runs an op's result type inference while verifying its invariants and
/// compares the result with the declared types (areCompatibleResultTypes).
/// An invalid op thus reports one error: the shape rule's explanation, which
/// inference emits at the op's location, or the two types, rather than
/// InferTypeOpInterface's extra "failed to infer returned types".
template <typename ConcreteType>
class VerifyInference
    : public mlir::OpTrait::TraitBase<ConcreteType, VerifyInference> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    llvm::SmallVector<mlir::Type, 2> inferred;
    if (mlir::failed(ConcreteType::inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), inferred)))
      return mlir::failure();
    return detail::verifyInferredTypes(op, inferred);
  }
};
} // namespace OpTrait

} // namespace sinter::graph

#include "dialects/Graph/IR/GraphInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/Graph/IR/GraphOps.h.inc"

namespace sinter::graph {
/// The three gradients of `op` spelled out in graph ops, built at `b`:
/// the probabilities recomputed, then dv = p^T g, dp = g v^T,
/// ds = p (dp - sum(dp p)), dq = ds k / sqrt(D), dk = ds^T q / sqrt(D).
llvm::SmallVector<mlir::Value, 3> spellOutAttentionGrad(mlir::OpBuilder &b,
                                                        AttentionGradOp op);

/// The one value of a splat floating-point `graph.constant`, if `v` is one.
std::optional<double> splatFloat(mlir::Value v);
} // namespace sinter::graph

#endif // SINTER_GRAPH_GRAPHOPS_H
