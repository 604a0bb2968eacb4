//===- FuseElementwise.cpp - Elementwise fusion that keeps contractions ---===//

#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace sinter {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/Transforms/Passes.h.inc"
} // namespace sinter

using namespace mlir;

namespace sinter {
namespace {

/// Whether the producer only moves data (a broadcast, a transpose, a copy):
/// its body yields its block arguments, so a copy of it per consumer costs
/// no arithmetic.
bool movesDataOnly(Operation *producer) {
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic)
    return false;
  Block &body = generic.getRegion().front();
  if (!llvm::hasSingleElement(body))
    return false;
  return llvm::all_of(body.getTerminator()->getOperands(), [&](Value v) {
    return isa<BlockArgument>(v) && cast<BlockArgument>(v).getOwner() == &body;
  });
}

/// Whether every user of `producer`'s results other than `consumer` comes
/// after `consumer` in its block. The fused op takes the consumer's place
/// and yields the producer's results for those users too, so it must come
/// before them; the producer's work then happens once, in the fused op.
bool otherUsersFollow(Operation *producer, Operation *consumer) {
  // A producer outside the consumer's loop would be computed in every
  // iteration.
  if (producer->getBlock() != consumer->getBlock())
    return false;
  for (Operation *user : producer->getUsers())
    if (user != consumer &&
        (user->getBlock() != consumer->getBlock() || !consumer->isBeforeInBlock(user)))
      return false;
  return true;
}

/// Whether `consumer` reads `producer` through one operand only and does
/// not write into it: the fused loop then has no other use for the
/// producer's values, and the producer can go.
bool readsOnce(linalg::GenericOp consumer, Operation *producer) {
  return llvm::count_if(consumer->getOperands(), [&](Value v) {
           return v.getDefiningOp() == producer;
         }) == 1 &&
         !llvm::any_of(consumer.getDpsInits(),
                       [&](Value init) { return init.getDefiningOp() == producer; });
}

/// Whether `consumer` is the only op that uses `producer`'s values.
bool onlyUser(Operation *producer, Operation *consumer) {
  return llvm::all_of(producer->getUsers(), [&](Operation *u) { return u == consumer; });
}

/// Whether `consumer` reads each element of `operand` once: its map is a
/// permutation of the consumer's loops, so no element of a fused producer
/// is computed twice.
bool readsEachElementOnce(linalg::GenericOp consumer, OpOperand *operand) {
  return consumer.getMatchingIndexingMap(operand).isPermutation();
}

/// Fusions that leave no copy of the producer's work behind (see the pass
/// description): into an all-parallel map, a producer used by it alone, or
/// one that only moves data; into a reduction that is not a contraction, a
/// producer used by it alone that it reads element by element (x - mean
/// squared, summed into a variance, never stored).
bool fusableAlone(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!consumer)
    return false;
  Operation *producer = operand->get().getDefiningOp();
  if (consumer.getNumLoops() != consumer.getNumParallelLoops()) {
    if (linalg::isaContractionOpInterface(consumer) ||
        linalg::isaConvolutionOpInterface(consumer))
      return false;
    return onlyUser(producer, consumer) && readsEachElementOnce(consumer, operand);
  }
  return onlyUser(producer, consumer) || movesDataOnly(producer);
}

/// A computing producer whose values other ops use too (a value kept for
/// the backward pass) fuses into an all-parallel consumer that reads it
/// element by element and comes before all of those users: the fused loop yields the producer's values as
/// well, the other users read them from it, and the producer is gone. Its
/// work is done once, and the second loop that read its result back is
/// gone. (Upstream's pattern leaves the producer for its other users, which
/// copies its work into the consumer; along a residual stream, x + f(x)
/// layer after layer, the copies nest and the program grows with the
/// square of depth.)
struct FuseKeepingProducerValues : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (consumer.getNumLoops() != consumer.getNumParallelLoops())
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      Operation *producer = operand.get().getDefiningOp();
      if (!producer || !linalg::areElementwiseOpsFusable(&operand) ||
          fusableAlone(&operand) || !readsEachElementOnce(consumer, &operand) ||
          !otherUsersFollow(producer, consumer) || !readsOnce(consumer, producer))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(consumer);
      rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

/// Whether `v` is a matmul's operand or product.
bool meetsMatmul(Value v) {
  auto isMatmul = [](Operation *op) {
    return isa_and_nonnull<linalg::MatmulOp, linalg::BatchMatmulOp>(op);
  };
  return isMatmul(v.getDefiningOp()) || llvm::any_of(v.getUsers(), isMatmul);
}

/// A transpose is a map that only moves data: as a generic it fuses like
/// one (splitting attention's heads reads the projection and writes bf16
/// in one loop). One next to a matmul stays named: the library reads it in
/// place (sinter-fold-matmul-transposes).
void generalizeTransposes(ModuleOp module) {
  IRRewriter rewriter(module.getContext());
  module.walk([&](linalg::TransposeOp op) {
    if (!op.hasPureTensorSemantics() || meetsMatmul(op.getInput()) ||
        meetsMatmul(op->getResult(0)))
      return;
    rewriter.setInsertionPoint(op);
    (void)linalg::generalizeNamedOp(rewriter, op);
  });
}

struct FuseElementwise : public impl::FuseElementwiseBase<FuseElementwise> {
  void runOnOperation() override {
    generalizeTransposes(getOperation());
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, fusableAlone);
    patterns.add<FuseKeepingProducerValues>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace sinter
