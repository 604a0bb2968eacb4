//===- ElementCasts.h - Tensors cast to another float type ------*- C++ -*-===//
//
// What the bf16 passes share: a tensor's element type, its copy in another
// float type made next to its definition, and the precision setting a pass
// reads.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TRANSFORMS_ELEMENTCASTS_H
#define SINTER_TRANSFORMS_ELEMENTCASTS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::linalg {
class GenericOp;
} // namespace mlir::linalg

namespace sinter {

/// Whether `v` is a ranked tensor whose element type `is` (&Type::isBF16).
inline bool hasElement(mlir::Value v, bool (mlir::Type::*is)() const) {
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(v.getType());
  return type && (type.getElementType().*is)();
}

/// `v` (a ranked tensor of floats) copied into `element` by a parallel
/// `linalg.generic` (arith.truncf to a narrower type, arith.extf to a wider
/// one), made just after `v`'s definition (at its block's start for an
/// argument).
mlir::Value castNextToDefinition(mlir::Value v, mlir::Type element);

/// A bf16 setting a pass reads: its option when given, else the module's
/// attribute (`fromModule`, possibly null). True for "bf16", false for
/// none or "f32"; for another value, an error naming the pass and `what`
/// is emitted on the module and nothing is returned.
std::optional<bool> bf16Setting(mlir::ModuleOp module, llvm::StringRef option,
                                bool optionGiven, mlir::StringAttr fromModule,
                                llvm::StringRef pass, llvm::StringRef what);

/// A loop left copying its one input unchanged (identity maps) into a
/// tensor of the same type, as a cast becomes once its input has the cast's
/// type: its result is the input, and it is erased. False for another loop.
bool foldCopyLoop(mlir::linalg::GenericOp op);

} // namespace sinter

#endif // SINTER_TRANSFORMS_ELEMENTCASTS_H
