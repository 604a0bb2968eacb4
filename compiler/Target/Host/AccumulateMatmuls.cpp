//===- AccumulateMatmuls.cpp - Products added into their accumulator ------===//
//
// A weight's gradient is a product added to the gradient accumulated over
// the earlier micro-batches: acc + A·B. Written as a product onto zeros and
// an elementwise add, it costs a fill, a temporary and a pass over both
// arrays; linalg.matmul onto acc means the same (C += A·B), and the
// library runs it as one call that adds into acc (beta = 1).
//
// A repeated block's backward function returns its weights' gradients, and
// its callers add them to their accumulators. When every caller does, the
// function takes the accumulator as an argument and adds the product into
// it, so the add and the temporary go there too.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/MatmulForm.h"
#include "compiler/Target/Host/Passes.h"
#include "compiler/Transforms/KnownCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter::host {
#define GEN_PASS_DEF_ACCUMULATEMATMULS
#include "compiler/Target/Host/Passes.h.inc"
} // namespace sinter::host

using namespace mlir;

namespace sinter::host {
namespace {

/// The operand of `op` that an elementwise `out + x` adds to its init, if
/// `op` is exactly that over identical shapes.
OpOperand *addend(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() ||
      !llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return nullptr;
  Block &body = op.getRegion().front();
  if (!llvm::hasNItems(body, 2))
    return nullptr;
  auto add = body.getTerminator()->getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return nullptr;
  Value in = body.getArgument(0), out = body.getArgument(1);
  bool matches = (add.getLhs() == out && add.getRhs() == in) ||
                 (add.getLhs() == in && add.getRhs() == out);
  return matches ? op.getDpsInputOperand(0) : nullptr;
}

/// acc + matmul(A, B) onto zeros  ->  matmul(A, B) onto acc.
struct AccumulateIntoMatmul : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    OpOperand *x = addend(op);
    if (!x || !op.hasPureTensorSemantics())
      return failure();
    auto mm = x->get().getDefiningOp<linalg::MatmulOp>();
    if (!mm || !mm->hasOneUse() || !matmulFormOf(mm) ||
        !isZeros(mm.getDpsInits()[0]) ||
        mm.getResult(0).getType() != op.getResult(0).getType())
      return failure();
    auto into = linalg::MatmulOp::create(rewriter, mm.getLoc(),
                                         TypeRange{op.getResult(0).getType()},
                                         mm.getDpsInputs(), op.getDpsInits());
    into.setIndexingMapsAttr(mm.getIndexingMaps());
    rewriter.replaceOp(op, into->getResults());
    rewriter.eraseOp(mm);
    return success();
  }
};

/// A fill of zeros that several products (or convolutions) start from
/// becomes one fill per product, placed just before it: after
/// bufferization each product's buffer is then filled right before the
/// call, which the library call drops (the library writes every element),
/// instead of being a copy of one shared buffer of zeros.
struct OwnZeros : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(
            op.getOperation()))
      return failure();
    Value init = op.getDpsInits()[0];
    if (!op.hasPureTensorSemantics() || !isZeros(init) || init.hasOneUse())
      return failure();
    auto fill = init.getDefiningOp<linalg::FillOp>();
    rewriter.setInsertionPoint(op);
    Operation *own = rewriter.clone(*fill);
    rewriter.modifyOpInPlace(op, [&] { op.getDpsInitsMutable()[0].set(own->getResult(0)); });
    return success();
  }
};

/// The product `f` returns at `index`, if it is a matmul onto zeros that
/// nothing else in `f` reads.
linalg::MatmulOp returnedProduct(func::FuncOp f, unsigned index) {
  Value v = f.getBody().back().getTerminator()->getOperand(index);
  auto mm = v.getDefiningOp<linalg::MatmulOp>();
  if (!mm || !v.hasOneUse() || !mm.hasPureTensorSemantics() || !matmulFormOf(mm) ||
      !isZeros(mm.getDpsInits()[0]))
    return {};
  return mm;
}

/// The `acc + r` that is the only use of `r`, if it is one.
linalg::GenericOp accumulationOf(Value r) {
  if (!r.hasOneUse())
    return {};
  auto add = dyn_cast<linalg::GenericOp>(r.use_begin()->getOwner());
  if (!add || !add.hasPureTensorSemantics() || add.getResult(0).getType() != r.getType())
    return {};
  OpOperand *x = addend(add);
  return x && x->get() == r ? add : linalg::GenericOp();
}

/// Makes result `index` of `f`, which every call adds to an accumulator,
/// the product added into an accumulator argument, and has each call pass
/// its own. `calls` are replaced by the new calls.
void accumulateInCallee(func::FuncOp f, unsigned index, linalg::MatmulOp product,
                        SmallVectorImpl<func::CallOp> &calls) {
  unsigned argIndex = f.getNumArguments();
  Type type = f.getResultTypes()[index];
  if (failed(f.insertArgument(argIndex, type, DictionaryAttr(), product.getLoc())))
    return;
  Operation *zeros = product.getDpsInits()[0].getDefiningOp();
  product.getDpsInitsMutable()[0].set(f.getArgument(argIndex));
  if (zeros->use_empty())
    zeros->erase();
  for (func::CallOp &call : calls) {
    linalg::GenericOp add = accumulationOf(call.getResult(index));
    SmallVector<Value> operands(call.getOperands());
    operands.push_back(add.getDpsInits()[0]);
    OpBuilder b(call);
    auto next = func::CallOp::create(b, call.getLoc(), f, operands);
    next->setDiscardableAttrs(call->getDiscardableAttrDictionary());
    add.getResult(0).replaceAllUsesWith(next.getResult(index));
    add.erase();
    call.replaceAllUsesWith(next.getResults());
    call.erase();
    call = next;
  }
}

/// Every private function's returned products that all its callers add to
/// an accumulator they already hold.
void accumulateAcrossCalls(ModuleOp module) {
  DominanceInfo dominance(module);
  for (auto &[f, calls] : knownCalls(module)) {
    if (!f.getBody().hasOneBlock())
      continue;
    for (unsigned index = 0; index < f.getNumResults(); ++index) {
      linalg::MatmulOp product = returnedProduct(f, index);
      // The accumulator must exist before the call that now takes it.
      auto accumulates = [&](func::CallOp call) {
        linalg::GenericOp add = accumulationOf(call.getResult(index));
        return add && dominance.properlyDominates(add.getDpsInits()[0], call);
      };
      if (product && llvm::all_of(calls, accumulates))
        accumulateInCallee(f, index, product, calls);
    }
  }
}

struct AccumulateMatmuls : public impl::AccumulateMatmulsBase<AccumulateMatmuls> {
  void runOnOperation() override {
    accumulateAcrossCalls(getOperation());
    RewritePatternSet patterns(&getContext());
    patterns.add<AccumulateIntoMatmul, OwnZeros>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::host
