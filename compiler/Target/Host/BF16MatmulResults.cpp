//===- BF16MatmulResults.cpp - Matmuls that write bf16 activations -------===//
//
// precision { activations: BF16 }: a matmul that makes an activation (one
// operand is a parameter: a projection, the logits, and the same products
// of the backward pass that make the activations' gradients) writes its f32
// sum, bias added, rounded once to bf16, as torch.autocast's matmuls do;
// the bias is rounded to bf16 as autocast rounds it. The libraries do the
// rounding as they write (cuBLASLt's bf16 D; oneDNN's bf16 destination),
// so the f32 result never reaches memory, and whatever reads it reads half
// the bytes and widens each element where it reads it. A parameter's
// gradient (no operand a parameter) keeps its f32 sum.
//
// Readers are rewritten where they stand: a loop widens the element it
// reads (and a rounding of it reads the bf16 element as it is); reshapes
// and slices take the bf16 type; a private function's result or argument
// becomes bf16 when all its calls agree (GPT-2's GELU input, kept by the
// forward function for the backward one). Any other reader gets a widened
// copy.
//
// The same readers' rewriting stores precision { residual: BF16 }'s rounded
// sums in bf16: a loop whose output is a value it rounded to bf16 and
// widened back writes the bf16 value itself.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/MatmulForm.h"
#include "compiler/Target/Host/Passes.h"
#include "compiler/Transforms/ElementCasts.h"
#include "compiler/Transforms/KnownCalls.h"
#include "dialects/Sinter/IR/SinterAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace sinter::host {
#define GEN_PASS_DEF_BF16MATMULRESULTS
#include "compiler/Target/Host/Passes.h.inc"

namespace {

RankedTensorType asBF16(Type t) {
  auto type = cast<RankedTensorType>(t);
  return type.clone(BFloat16Type::get(t.getContext()));
}

/// A loop that only rounds its one input to bf16.
bool isRounding(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumResults() != 1)
    return false;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  auto trunc = yield.getOperand(0).getDefiningOp<arith::TruncFOp>();
  return trunc && trunc.getIn() == op.getBody()->getArgument(0) &&
         op.getBody()->getOperations().size() == 2;
}

/// Whether a value is a parameter (or its bf16 copy, a view of it), in the
/// step or passed as one to every call of a private function.
class Parameters {
public:
  explicit Parameters(ModuleOp module) : calls(knownCalls(module)) {}

  bool contains(Value v) {
    if (auto it = known.find(v); it != known.end())
      return it->second;
    known[v] = false; // a cycle through calls is no parameter
    bool is = find(v);
    known[v] = is;
    return is;
  }

private:
  bool find(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto f = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (!f || arg.getOwner() != &f.getBody().front())
        return false;
      if (attrs::param.getArg(f, arg.getArgNumber()))
        return true;
      auto it = calls.find(f);
      return it != calls.end() && !it->second.empty() &&
             llvm::all_of(it->second, [&](func::CallOp call) {
               return contains(call.getOperand(arg.getArgNumber()));
             });
    }
    Operation *def = v.getDefiningOp();
    if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      return contains(def->getOperand(0));
    if (auto generic = dyn_cast<linalg::GenericOp>(def); generic && isRounding(generic))
      return contains(generic.getDpsInputs()[0]);
    return false;
  }

  llvm::MapVector<func::FuncOp, SmallVector<func::CallOp>> calls;
  DenseMap<Value, bool> known;
};

/// The start a matmul's sum takes, if the pass can give it in bf16: zeros,
/// or (not batched) an f32 bias broadcast over the rows.
enum class Start { none, zeros, bias };

Start startOf(linalg::LinalgOp op) {
  Value init = op.getDpsInits()[0];
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    return fillsZeros(fill) ? Start::zeros : Start::none;
  auto rows = init.getDefiningOp<linalg::BroadcastOp>();
  if (!rows || !isa<linalg::MatmulOp>(op.getOperation()) ||
      !hasElement(rows.getInput(), &Type::isF32) ||
      cast<RankedTensorType>(rows.getInput().getType()).getRank() != 1 ||
      rows.getDimensions() != ArrayRef<int64_t>{0})
    return Start::none;
  return Start::bias;
}

/// A matmul the libraries take with a bf16 result: bf16 operands, an f32
/// result, one of their forms.
bool isLibraryBF16Matmul(linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()) ||
      !op.hasPureTensorSemantics() ||
      !cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape() || !hasElement(op.getDpsInputs()[0], &Type::isBF16) ||
      !hasElement(op.getDpsInputs()[1], &Type::isBF16) ||
      !hasElement(op->getResult(0), &Type::isF32))
    return false;
  if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation()))
    return matmulFormOf(mm).has_value();
  auto bmm = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
  return bmm && batchMatmulFormOf(bmm).has_value();
}

class Narrowing {
public:
  explicit Narrowing(ModuleOp module) : calls(knownCalls(module)) {}

  /// `op` again, onto its start in bf16, with a bf16 result; its readers
  /// rewritten to read that.
  void narrow(linalg::LinalgOp op, Start start) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    auto type = asBF16(op->getResult(0).getType());
    Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    Value init;
    if (start == Start::zeros) {
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(b.getBF16Type()));
      init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
    } else {
      auto rows = op.getDpsInits()[0].getDefiningOp<linalg::BroadcastOp>();
      Value bias = rounded(rows.getInput());
      b.setInsertionPoint(op);
      init = linalg::BroadcastOp::create(b, loc, bias, empty, rows.getDimensions())
                 ->getResult(0);
    }
    Operation *made;
    SmallVector<Value> inputs(op.getDpsInputs());
    if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
      auto m = linalg::MatmulOp::create(b, loc, TypeRange{type}, inputs, ValueRange{init});
      if (mm.hasUserDefinedMaps())
        m.setIndexingMapsAttr(mm.getIndexingMaps());
      made = m;
    } else {
      auto bmm = cast<linalg::BatchMatmulOp>(op.getOperation());
      auto m = linalg::BatchMatmulOp::create(b, loc, TypeRange{type}, inputs,
                                             ValueRange{init});
      if (bmm.hasUserDefinedMaps())
        m.setIndexingMapsAttr(bmm.getIndexingMaps());
      made = m;
    }
    for (NamedAttribute attr : op->getDiscardableAttrs())
      made->setAttr(attr.getName(), attr.getValue());
    Value result = made->getResult(0);
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
    readBF16(result);
  }

  /// Whether output `i` of `op` writes a value it rounded to bf16 and
  /// widened back (precision.residual's rounding of a sum, fused into the
  /// loop that makes the sum) and never reads its init. Such a loop is
  /// never a copy, so narrowing others never erases it.
  static bool writesRoundedValue(linalg::GenericOp op, unsigned i) {
    auto type = dyn_cast<RankedTensorType>(op->getResult(i).getType());
    if (!op.hasPureTensorSemantics() || !type || !type.getElementType().isF32() ||
        !type.hasStaticShape())
      return false;
    auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
    auto wide = yield.getOperand(i).getDefiningOp<arith::ExtFOp>();
    BlockArgument out = op.getMatchingBlockArgument(op.getDpsInitOperand(i));
    return wide && wide.getIn().getType().isBF16() &&
           wide.getIn().getDefiningOp<arith::TruncFOp>() && out.use_empty();
  }

  /// Such an output written in bf16 instead, its readers rewritten. The
  /// values are the same.
  void narrowRoundedOutput(linalg::GenericOp op, unsigned i) {
    auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
    auto wide = yield.getOperand(i).getDefiningOp<arith::ExtFOp>();
    OpOperand *init = op.getDpsInitOperand(i);
    auto type = cast<RankedTensorType>(op->getResult(i).getType());
    OpBuilder b(op);
    init->set(tensor::EmptyOp::create(b, op.getLoc(), type.getShape(), b.getBF16Type()));
    op.getMatchingBlockArgument(init).setType(b.getBF16Type());
    yield->setOperand(i, wide.getIn());
    if (wide->use_empty())
      wide->erase();
    Value result = op->getResult(i);
    result.setType(asBF16(type));
    readBF16(result);
  }

  /// Arguments whose every call now passes bf16 become bf16; a call that
  /// passes f32 where others pass bf16 is given widened copies instead.
  /// After every narrowing, so that calls fed by different products agree.
  void finishCalls() {
    while (!pendingArguments.empty()) {
      auto [f, index] = pendingArguments.pop_back_val();
      ArrayRef<func::CallOp> sites = calls.find(f)->second;
      bool all = llvm::all_of(sites, [&](func::CallOp call) {
        return hasElement(call.getOperand(index), &Type::isBF16);
      });
      BlockArgument arg = f.getArgument(index);
      if (all && !hasElement(arg, &Type::isBF16)) {
        arg.setType(asBF16(arg.getType()));
        setSignature(f);
        readBF16(arg);
        continue;
      }
      if (all)
        continue;
      for (func::CallOp call : sites) {
        OpOperand &operand = call->getOpOperand(index);
        if (hasElement(operand.get(), &Type::isBF16))
          operand.set(widened(operand.get()));
      }
    }
  }

private:
  /// `bias` rounded to bf16, once, next to its definition.
  Value rounded(Value bias) {
    Value &done = roundings[bias];
    if (!done)
      made.insert(done = castNextToDefinition(bias, BFloat16Type::get(bias.getContext())));
    return done;
  }

  /// `v`, now bf16, for readers that expected f32: each is rewritten to
  /// read the bf16 value, or given a widened copy.
  void readBF16(Value v) {
    for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
      Operation *user = use.getOwner();
      if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user) &&
          use.getOperandNumber() == 0) {
        Value view = user->getResult(0);
        view.setType(asBF16(view.getType()));
        readBF16(view);
      } else if (auto generic = dyn_cast<linalg::GenericOp>(user);
                 generic && generic.isDpsInput(&use)) {
        widenInBody(generic, use);
      } else if (auto extract = dyn_cast<tensor::ExtractOp>(user)) {
        OpBuilder b(extract);
        b.setInsertionPointAfter(extract);
        extract.getResult().setType(b.getBF16Type());
        auto wide = arith::ExtFOp::create(b, extract.getLoc(), b.getF32Type(), extract.getResult());
        extract.getResult().replaceAllUsesExcept(wide, wide);
      } else if (isa<func::ReturnOp>(user) && returnsBF16(use)) {
      } else if (auto call = dyn_cast<func::CallOp>(user);
                 call && calls.count(callee(call))) {
        pendingArguments.insert({callee(call), use.getOperandNumber()});
      } else {
        use.set(widened(v));
      }
    }
  }

  /// The element `use` brings into `generic`'s body is bf16, widened where
  /// the body reads it; a rounding of it is the element itself, and a loop
  /// left copying it goes (attention's rounded copy of its projection).
  void widenInBody(linalg::GenericOp generic, OpOperand &use) {
    BlockArgument arg = generic.getMatchingBlockArgument(&use);
    arg.setType(BFloat16Type::get(arg.getContext()));
    OpBuilder b = OpBuilder::atBlockBegin(arg.getOwner());
    auto wide = arith::ExtFOp::create(b, generic.getLoc(), b.getF32Type(), arg);
    arg.replaceAllUsesExcept(wide, wide);
    for (Operation *reader : llvm::make_early_inc_range(wide->getUsers()))
      if (auto trunc = dyn_cast<arith::TruncFOp>(reader); trunc && trunc.getType().isBF16()) {
        trunc.replaceAllUsesWith(arg);
        trunc->erase();
      }
    if (wide->use_empty())
      wide->erase();
    // A cast this pass made and keeps for reuse stays, copy or not.
    if (!made.contains(generic.getResult(0)))
      foldCopyLoop(generic);
  }

  /// The f32 copy of `v`, made once, next to its definition.
  Value widened(Value v) {
    Value &done = widenings[v];
    if (!done)
      made.insert(done = castNextToDefinition(v, Float32Type::get(v.getContext())));
    return done;
  }

  func::FuncOp callee(func::CallOp call) const {
    return SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
  }

  /// A private function whose result `use` returns gives it in bf16 to
  /// every call, and their readers are rewritten; false for another
  /// function (its value then stays f32 there).
  bool returnsBF16(OpOperand &use) {
    auto f = use.getOwner()->getParentOfType<func::FuncOp>();
    auto it = calls.find(f);
    if (it == calls.end())
      return false;
    unsigned index = use.getOperandNumber();
    // Every return of the function gives the same result in bf16.
    bool others = false;
    f.walk([&](func::ReturnOp ret) {
      if (ret != use.getOwner() && !hasElement(ret.getOperand(index), &Type::isBF16))
        others = true;
    });
    if (others)
      return false;
    setSignature(f);
    for (func::CallOp call : it->second) {
      Value result = call.getResult(index);
      result.setType(asBF16(result.getType()));
      readBF16(result);
    }
    return true;
  }

  static void setSignature(func::FuncOp f) {
    auto ret = cast<func::ReturnOp>(f.getBody().back().getTerminator());
    f.setFunctionType(FunctionType::get(f.getContext(), f.front().getArgumentTypes(),
                                        ret->getOperandTypes()));
  }

  llvm::MapVector<func::FuncOp, SmallVector<func::CallOp>> calls;
  DenseMap<Value, Value> roundings, widenings;
  DenseSet<Value> made; ///< their values: casts this pass keeps
  llvm::SetVector<std::pair<func::FuncOp, unsigned>> pendingArguments;
};

struct BF16MatmulResults : impl::BF16MatmulResultsBase<BF16MatmulResults> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<bool> bf16 = bf16Setting(
        module, activations, activations.getNumOccurrences() != 0,
        attrs::activations.get(module), "sinter-bf16-matmul-results", "activations");
    if (!bf16)
      return signalPassFailure();
    if (!*bf16)
      return;
    Parameters parameters(module);
    SmallVector<std::pair<linalg::LinalgOp, Start>> matmuls;
    module.walk([&](linalg::LinalgOp op) {
      if (!isLibraryBF16Matmul(op))
        return;
      Start start = startOf(op);
      if (start != Start::none && llvm::any_of(op.getDpsInputs(), [&](Value in) {
            return parameters.contains(in);
          }))
        matmuls.push_back({op, start});
    });
    Narrowing narrowing(module);
    for (auto [op, start] : matmuls)
      narrowing.narrow(op, start);
    SmallVector<std::pair<linalg::GenericOp, unsigned>> rounded;
    module.walk([&](linalg::GenericOp op) {
      for (unsigned i = 0, e = op.getNumDpsInits(); i < e; ++i)
        if (Narrowing::writesRoundedValue(op, i))
          rounded.push_back({op, i});
    });
    // An earlier narrowing may have made a rounding the element itself.
    for (auto [op, i] : rounded)
      if (Narrowing::writesRoundedValue(op, i))
        narrowing.narrowRoundedOutput(op, i);
    narrowing.finishCalls();
    // The f32 starts the products left, then their empty tensors.
    module.walk([](linalg::LinalgOp op) {
      if (isa<linalg::FillOp, linalg::BroadcastOp>(op.getOperation()) &&
          op.hasPureTensorSemantics() && op->use_empty())
        op->erase();
    });
    module.walk([](tensor::EmptyOp op) {
      if (op->use_empty())
        op->erase();
    });
  }
};

} // namespace
} // namespace sinter::host
