//===- AccumulateMatmuls.cpp - Products added into their accumulator ------===//
//
// A weight's gradient is a product added to the gradient accumulated over
// the earlier micro-batches: acc + A·B. Written as a product onto zeros and
// an elementwise add, it costs a fill, a temporary and a pass over both
// arrays; linalg.matmul onto acc means the same (C += A·B), and the
// library runs it as one call that adds into acc (beta = 1).
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/MatmulForm.h"
#include "compiler/Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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

struct AccumulateMatmuls : public impl::AccumulateMatmulsBase<AccumulateMatmuls> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<AccumulateIntoMatmul, OwnZeros>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter::host
