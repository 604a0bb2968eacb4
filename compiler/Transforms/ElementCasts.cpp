//===- ElementCasts.cpp - Tensors cast to another float type --------------===//

#include "compiler/Transforms/ElementCasts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace sinter {

Value castNextToDefinition(Value v, Type element) {
  OpBuilder b(v.getContext());
  if (Operation *def = v.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
  Location loc = v.getLoc();
  auto type = cast<RankedTensorType>(v.getType()).clone(element);
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), element);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  auto cast = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{v}, ValueRange{empty},
      ArrayRef<AffineMap>{id, id},
      SmallVector<utils::IteratorType>(type.getRank(), utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        unsigned from = args[0].getType().getIntOrFloatBitWidth(),
                 to = element.getIntOrFloatBitWidth();
        Value c = to < from ? arith::TruncFOp::create(nb, nl, element, args[0]).getResult()
                            : arith::ExtFOp::create(nb, nl, element, args[0]).getResult();
        linalg::YieldOp::create(nb, nl, c);
      });
  return cast.getResult(0);
}

std::optional<bool> bf16Setting(ModuleOp module, StringRef option, bool optionGiven,
                                StringAttr fromModule, StringRef pass, StringRef what) {
  StringRef mode = option;
  if (!optionGiven && fromModule)
    mode = fromModule.getValue();
  if (mode.empty() || mode == "f32")
    return false;
  if (mode == "bf16")
    return true;
  module.emitError(pass) << ": unknown " << what << " '" << mode << "'; expected f32 or bf16";
  return std::nullopt;
}

bool foldCopyLoop(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumResults() != 1 ||
      op.getDpsInputs()[0].getType() != op.getResult(0).getType() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  if (yield.getOperand(0) != op.getBody()->getArgument(0))
    return false;
  op.getResult(0).replaceAllUsesWith(op.getDpsInputs()[0]);
  op->erase();
  return true;
}

} // namespace sinter
