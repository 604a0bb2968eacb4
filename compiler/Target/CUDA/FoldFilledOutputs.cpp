//===- FoldFilledOutputs.cpp - Outputs written once read the fill, not memory ===//
//
// A generic whose output map is a permutation of all its loops visits each
// element of that output once, so its payload reads the value the output
// held before: when that is a fill's constant, the payload can take the
// constant, and the output needs no fill. The gradient norm's sums of
// squares of a one-dimensional parameter are such an output, beside the
// norm's running total: as the total's "stored" output (written, never
// read) the reduction runs as a block of threads, where a payload that
// read the output kept it one thread's loop (74 launches of GPT-2's step,
// each tens of microseconds).
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace sinter::cuda {
#define GEN_PASS_DEF_CUDAFOLDFILLEDOUTPUTS
#include "compiler/Target/CUDA/Passes.h.inc"

namespace {

/// The constant `value` was filled with, if a linalg.fill of one that
/// arith.constant can make made it.
TypedAttr filledConstant(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  Attribute constant;
  if (!fill || !matchPattern(fill.getInputs()[0], m_Constant(&constant)))
    return {};
  auto typed = dyn_cast<TypedAttr>(constant);
  return typed && arith::ConstantOp::isBuildableWith(typed, typed.getType())
             ? typed
             : TypedAttr();
}

struct CUDAFoldFilledOutputs
    : public impl::CUDAFoldFilledOutputsBase<CUDAFoldFilledOutputs> {
  void runOnOperation() override {
    getOperation().walk([](linalg::GenericOp op) {
      if (!op.hasPureTensorSemantics())
        return;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        BlockArgument old = op.getMatchingBlockArgument(&init);
        TypedAttr constant = filledConstant(init.get());
        if (old.use_empty() || !constant ||
            !op.getMatchingIndexingMap(&init).isPermutation())
          continue;
        OpBuilder b = OpBuilder::atBlockBegin(old.getOwner());
        Value value = arith::ConstantOp::create(b, op.getLoc(), constant);
        old.replaceAllUsesWith(value);
        // The fill's own destination: every element is written here.
        auto fill = init.get().getDefiningOp<linalg::FillOp>();
        init.set(fill.getOutputs()[0]);
        if (fill->use_empty())
          fill->erase();
      }
    });
  }
};

} // namespace
} // namespace sinter::cuda
