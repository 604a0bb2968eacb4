//===- BF16Matmuls.cpp - Matmul inputs rounded to bf16 --------------------===//
//
// precision { compute: BF16 }: a matmul reads bf16 inputs and sums their
// products (exact in f32) in f32. Rounding its inputs, and nothing else,
// keeps every other value (parameters, moments, norms, the loss, gradient
// sums) in f32, as the config promises.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/ElementCasts.h"
#include "compiler/Transforms/KnownCalls.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_BF16MATMULS
#include "compiler/Transforms/Passes.h.inc"

namespace {

bool isF32Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isF32();
}

/// A matmul of f32 tensors, in a form the libraries take in bf16.
bool isF32Matmul(linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()) ||
      !op.hasPureTensorSemantics())
    return false;
  return llvm::all_of(op->getOperands(), isF32Tensor);
}

/// Each value's bf16 rounding, made once next to the value's definition so
/// that it dominates every matmul that reads it.
class Rounding {
public:
  Value of(Value v) {
    if (Value done = rounded.lookup(v))
      return done;
    Value r = reshapedRounding(v);
    if (!r)
      r = roundingGeneric(v);
    rounded[v] = r;
    return r;
  }

  /// A reshaped value's rounding is the rounded source, reshaped: the
  /// rounding then reads the loop's own result, and fusion puts it in
  /// that loop (a layer-norm writes its f32 and its bf16 output at once).
  Value reshapedRounding(Value v) {
    Operation *def = v.getDefiningOp();
    if (!isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      return {};
    Value source = of(def->getOperand(0));
    OpBuilder b(def);
    b.setInsertionPointAfter(def);
    auto type = cast<RankedTensorType>(v.getType()).clone(b.getBF16Type());
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
      return tensor::CollapseShapeOp::create(b, def->getLoc(), type, source,
                                             collapse.getReassociationIndices());
    auto expand = cast<tensor::ExpandShapeOp>(def);
    return tensor::ExpandShapeOp::create(b, def->getLoc(), type, source,
                                         expand.getReassociationIndices(),
                                         expand.getMixedOutputShape());
  }

  Value roundingGeneric(Value v) {
    return castNextToDefinition(v, BFloat16Type::get(v.getContext()));
  }

  /// The rounding of `v`, when it is `v`'s only use.
  linalg::GenericOp onlyUse(Value v) const {
    auto it = rounded.find(v);
    if (it == rounded.end() || !v.hasOneUse())
      return {};
    auto round = it->second.getDefiningOp<linalg::GenericOp>();
    return *v.getUsers().begin() == round.getOperation() ? round : linalg::GenericOp();
  }

  /// Replaces `v`'s rounding by `v` itself, now of the bf16 type.
  void becomeRounded(Value v) {
    linalg::GenericOp round = onlyUse(v);
    Operation *empty = round.getDpsInits()[0].getDefiningOp();
    v.setType(round.getResult(0).getType());
    round.getResult(0).replaceAllUsesWith(v);
    round->erase();
    if (empty && empty->use_empty())
      empty->erase();
    rounded.erase(v);
  }

private:
  DenseMap<Value, Value> rounded;
};

/// A private function's argument that is only rounded (only matmuls read
/// it) becomes a bf16 argument, rounded by its callers: a layer's weight is
/// then rounded once, in the step before its micro-batch loop, not in every
/// call of its forward and backward functions. True when one moved.
bool roundArgumentsInCallers(func::FuncOp f, ArrayRef<func::CallOp> calls,
                             Rounding &rounding) {
  bool moved = false;
  for (BlockArgument arg : f.getArguments()) {
    if (!rounding.onlyUse(arg))
      continue;
    rounding.becomeRounded(arg);
    for (func::CallOp call : calls) {
      OpOperand &operand = call->getOpOperand(arg.getArgNumber());
      operand.set(rounding.of(operand.get()));
    }
    moved = true;
  }
  return moved;
}

/// A private function's result that every caller only rounds (an
/// activation the forward pass keeps for a matmul of the backward pass)
/// becomes a bf16 result, rounded in the function: there the rounding
/// joins the loop that computes the value (which may round it for its own
/// matmul already), and the f32 value need not be written at all. True
/// when one moved.
bool roundResultsInCallee(func::FuncOp f, ArrayRef<func::CallOp> calls,
                          Rounding &rounding) {
  bool moved = false;
  for (unsigned i = 0; i < f.getNumResults(); ++i) {
    if (isa<BFloat16Type>(cast<RankedTensorType>(f.getResultTypes()[i]).getElementType()) ||
        !llvm::all_of(calls, [&](func::CallOp call) {
          return bool(rounding.onlyUse(call.getResult(i)));
        }))
      continue;
    f.walk([&](func::ReturnOp ret) {
      OpOperand &operand = ret->getOpOperand(i);
      operand.set(rounding.of(operand.get()));
    });
    for (func::CallOp call : calls)
      rounding.becomeRounded(call.getResult(i));
    moved = true;
  }
  return moved;
}

/// Moves roundings across calls (above) until none moves: a caller's own
/// argument, or a callee's result, may move next.
void roundAcrossCalls(ModuleOp module, Rounding &rounding) {
  for (bool moved = true; moved;) {
    moved = false;
    for (auto &[f, calls] : knownCalls(module)) {
      bool changed = roundArgumentsInCallers(f, calls, rounding);
      changed |= roundResultsInCallee(f, calls, rounding);
      if (!changed)
        continue;
      auto ret = cast<func::ReturnOp>(f.front().getTerminator());
      f.setFunctionType(FunctionType::get(f.getContext(), f.front().getArgumentTypes(),
                                          ret->getOperandTypes()));
      moved = true;
    }
  }
}

/// `op` again, reading `inputs`: the named op's body is rebuilt for their
/// element type (extended to f32 before the multiply).
Operation *withInputs(OpBuilder &b, linalg::LinalgOp op, ValueRange inputs) {
  Location loc = op.getLoc();
  Value init = op.getDpsInits()[0];
  TypeRange results = op->getResultTypes();
  if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
    auto made = linalg::MatmulOp::create(b, loc, results, inputs, ValueRange{init});
    if (mm.hasUserDefinedMaps())
      made.setIndexingMapsAttr(mm.getIndexingMaps());
    return made;
  }
  auto bmm = cast<linalg::BatchMatmulOp>(op.getOperation());
  auto made = linalg::BatchMatmulOp::create(b, loc, results, inputs, ValueRange{init});
  if (bmm.hasUserDefinedMaps())
    made.setIndexingMapsAttr(bmm.getIndexingMaps());
  return made;
}

struct BF16Matmuls : impl::BF16MatmulsBase<BF16Matmuls> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<bool> bf16 =
        bf16Setting(module, compute, compute.getNumOccurrences() != 0,
                    attrs::compute.get(module), "sinter-bf16-matmuls", "compute");
    if (!bf16)
      return signalPassFailure();
    if (!*bf16)
      return;
    SmallVector<linalg::LinalgOp> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (isF32Matmul(op))
        matmuls.push_back(op);
    });
    Rounding rounding;
    for (linalg::LinalgOp op : matmuls) {
      SmallVector<Value> inputs;
      for (Value in : op.getDpsInputs())
        inputs.push_back(rounding.of(in));
      OpBuilder b(op);
      Operation *made = withInputs(b, op, inputs);
      op->replaceAllUsesWith(made->getResults());
      op->erase();
    }
    // The f32 reshapes the roundings replaced, so a value's rounding is
    // its only use.
    module.walk([](Operation *op) {
      if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op) && isOpTriviallyDead(op))
        op->erase();
    });
    roundAcrossCalls(module, rounding);
  }
};

} // namespace
} // namespace sinter
