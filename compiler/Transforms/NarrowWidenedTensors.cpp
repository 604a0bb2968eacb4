//===- NarrowWidenedTensors.cpp - Widened bf16 values read in bf16 --------===//
//
// cuDNN's attention gradients are bf16. Their f32 copies, transposed and
// gathered into the query-key-value gradient, hold nothing bf16 cannot:
// the bias gradient sums them, and the matmuls round them back to bf16.
// Building that gradient in bf16 instead, and widening each element where
// a loop reads it, gives the same values for half the bytes written and
// read, and the rounding copy for the matmuls goes (a rounding of a
// widened bf16 value is the value).
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/ElementCasts.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_NARROWWIDENEDTENSORS
#include "compiler/Transforms/Passes.h.inc"

namespace {

/// A loop that only widens a bf16 input to f32: parallel loops, one
/// result into a tensor.empty it does not read, a body `extf; yield`.
bool isWidening(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumResults() != 1 ||
      op.getNumReductionLoops() != 0 || !hasElement(op.getResult(0), &Type::isF32) ||
      !cast<RankedTensorType>(op.getResult(0).getType()).hasStaticShape() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isPermutation() ||
      !op.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  auto extf = yield.getOperand(0).getDefiningOp<arith::ExtFOp>();
  auto arg = extf ? dyn_cast<BlockArgument>(extf.getIn()) : BlockArgument();
  return arg && arg.getOwner() == op.getBody() && arg.getType().isBF16() &&
         arg.getArgNumber() < op.getNumDpsInputs() &&
         op.getBody()->getOperations().size() == 2;
}

/// Collects into `ops` what makes `v` from widened bf16 values: widening
/// loops, reshapes, static insertions and the empty tensors they fill.
/// False when some part is made otherwise.
bool collectWidened(Value v, llvm::SetVector<Operation *> &ops) {
  Operation *def = v.getDefiningOp();
  if (!def || !hasElement(v, &Type::isF32))
    return false;
  if (ops.contains(def))
    return true;
  bool made =
      llvm::TypeSwitch<Operation *, bool>(def)
          .Case([](linalg::GenericOp op) { return isWidening(op); })
          .Case([&](tensor::CollapseShapeOp op) {
            return collectWidened(op.getSrc(), ops);
          })
          .Case([&](tensor::ExpandShapeOp op) {
            return op.getOutputShape().empty() && collectWidened(op.getSrc(), ops);
          })
          .Case([&](tensor::InsertSliceOp op) {
            return op.getOffsets().empty() && op.getSizes().empty() &&
                   op.getStrides().empty() && collectWidened(op.getSource(), ops) &&
                   collectWidened(op.getDest(), ops);
          })
          .Case([](tensor::EmptyOp op) { return op.getDynamicSizes().empty(); })
          .Default([](Operation *) { return false; });
  if (made)
    ops.insert(def);
  return made;
}

/// The bf16 tensors that the widened f32 ones were made from, built next
/// to each f32 one on demand.
class Narrowing {
public:
  Value of(Value v) {
    if (Value done = narrow.lookup(v))
      return done;
    Operation *def = v.getDefiningOp();
    auto type = cast<RankedTensorType>(v.getType());
    auto bf16 = type.clone(BFloat16Type::get(v.getContext()));
    Value made = llvm::TypeSwitch<Operation *, Value>(def)
                     .Case([&](linalg::GenericOp op) { return copyInput(op, bf16); })
                     .Case([&](tensor::CollapseShapeOp op) -> Value {
                       Value src = of(op.getSrc());
                       OpBuilder b = builderAfter(op);
                       return tensor::CollapseShapeOp::create(
                           b, op.getLoc(), bf16, src, op.getReassociationIndices());
                     })
                     .Case([&](tensor::ExpandShapeOp op) -> Value {
                       Value src = of(op.getSrc());
                       OpBuilder b = builderAfter(op);
                       return tensor::ExpandShapeOp::create(b, op.getLoc(), bf16, src,
                                                            op.getReassociationIndices(),
                                                            op.getMixedOutputShape());
                     })
                     .Case([&](tensor::InsertSliceOp op) -> Value {
                       Value src = of(op.getSource()), dest = of(op.getDest());
                       OpBuilder b = builderAfter(op);
                       return tensor::InsertSliceOp::create(
                           b, op.getLoc(), src, dest, op.getMixedOffsets(),
                           op.getMixedSizes(), op.getMixedStrides());
                     })
                     .Case([&](tensor::EmptyOp op) -> Value {
                       OpBuilder b = builderAfter(op);
                       return tensor::EmptyOp::create(b, op.getLoc(), bf16.getShape(),
                                                      bf16.getElementType());
                     });
    narrow[v] = made;
    return made;
  }

private:
  static OpBuilder builderAfter(Operation *op) {
    OpBuilder b(op->getContext());
    b.setInsertionPointAfter(op);
    return b;
  }

  /// The widening loop without its widening: the same loops copy the bf16
  /// input into a bf16 tensor.
  static Value copyInput(linalg::GenericOp op, RankedTensorType bf16) {
    OpBuilder b = builderAfter(op);
    auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
    auto arg =
        cast<BlockArgument>(yield.getOperand(0).getDefiningOp<arith::ExtFOp>().getIn());
    OpOperand *input = op.getDpsInputOperand(arg.getArgNumber());
    AffineMap in = op.getMatchingIndexingMap(input);
    AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (in.isIdentity() && out.isIdentity() && input->get().getType() == bf16)
      return input->get();
    Value empty =
        tensor::EmptyOp::create(b, op.getLoc(), bf16.getShape(), bf16.getElementType());
    auto copy = linalg::GenericOp::create(
        b, op.getLoc(), TypeRange{bf16}, ValueRange{input->get()}, ValueRange{empty},
        ArrayRef<AffineMap>{in, out}, op.getIteratorTypesArray(),
        [](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(nb, l, args[0]);
        });
    return copy.getResult(0);
  }

  DenseMap<Value, Value> narrow;
};

/// `op` reads `operand`'s bf16 source instead, widening it in its body; a
/// rounding of the widened value to bf16 becomes the source value itself.
void readNarrow(linalg::GenericOp op, OpOperand &operand, Value source) {
  operand.set(source);
  BlockArgument arg = op.getMatchingBlockArgument(&operand);
  Type f32 = arg.getType();
  arg.setType(cast<RankedTensorType>(source.getType()).getElementType());
  OpBuilder b = OpBuilder::atBlockBegin(op.getBody());
  Value wide = arith::ExtFOp::create(b, op.getLoc(), f32, arg);
  arg.replaceAllUsesExcept(wide, wide.getDefiningOp());
  for (Operation *user : llvm::make_early_inc_range(wide.getUsers()))
    if (auto round = dyn_cast<arith::TruncFOp>(user); round && round.getType().isBF16()) {
      round.replaceAllUsesWith(arg);
      round->erase();
    }
  if (wide.use_empty())
    wide.getDefiningOp()->erase();
}

struct NarrowWidenedTensors : impl::NarrowWidenedTensorsBase<NarrowWidenedTensors> {
  void runOnOperation() override {
    // Each widened f32 value that only loops read, and what makes it.
    llvm::MapVector<Value, llvm::SetVector<Operation *>> widened;
    getOperation().walk([&](linalg::GenericOp op) {
      for (Value in : op.getDpsInputs()) {
        if (widened.contains(in))
          continue;
        llvm::SetVector<Operation *> ops;
        if (!collectWidened(in, ops) || !readOnlyByLoops(in, ops))
          continue;
        widened[in] = std::move(ops);
      }
    });
    Narrowing narrowing;
    for (auto &[value, ops] : widened) {
      Value source = narrowing.of(value);
      // Each reader once, though it may read the value more than once.
      llvm::SetVector<linalg::GenericOp> readers;
      for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
        auto reader = cast<linalg::GenericOp>(use.getOwner());
        readNarrow(reader, use, source);
        readers.insert(reader);
      }
      for (linalg::GenericOp reader : readers)
        foldCopyLoop(reader);
      for (Operation *op : llvm::reverse(ops))
        if (isOpTriviallyDead(op))
          op->erase();
    }
    // The erased loops' f32 inits.
    getOperation().walk([](tensor::EmptyOp op) {
      if (op->use_empty())
        op->erase();
    });
  }

  /// Whether loops read `v` only as an input, and what makes it feeds
  /// only itself: then none of it is left once they read bf16.
  static bool readOnlyByLoops(Value v, const llvm::SetVector<Operation *> &ops) {
    for (OpOperand &use : v.getUses()) {
      auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
      if (!generic || !generic.isDpsInput(&use))
        return false;
    }
    for (Operation *op : ops)
      for (Value r : op->getResults())
        if (r != v &&
            llvm::any_of(r.getUsers(), [&](Operation *u) { return !ops.contains(u); }))
          return false;
    return true;
  }
};

} // namespace
} // namespace sinter
