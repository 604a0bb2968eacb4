//===- FuseElementwise.cpp - Elementwise fusion that keeps contractions ---===//

#include "compiler/Transforms/FusionConditions.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace sinter {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "compiler/Transforms/Passes.h.inc"

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

/// Whether `consumer` is the only op that uses `producer`'s values.
bool onlyUser(Operation *producer, Operation *consumer) {
  return llvm::all_of(producer->getUsers(), [&](Operation *u) { return u == consumer; });
}

/// Fusions that leave no copy of the producer's work behind (see the pass
/// description): into an all-parallel map, a producer used by it alone, or
/// one that only moves data; into a reduction, a producer used by it alone
/// that it reads element by element (x - mean squared, summed into a
/// variance, never stored; dy times x-hat, summed into a scale's gradient).
/// Matmuls and convolutions are named ops, never generics, and a generic
/// that reads an operand along a broadcast (as a matmul would) does not
/// read it element by element.
bool fusableAlone(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!consumer)
    return false;
  Operation *producer = operand->get().getDefiningOp();
  if (consumer.getNumLoops() != consumer.getNumParallelLoops())
    return onlyUser(producer, consumer) && readsEachElementOnce(consumer, operand);
  return onlyUser(producer, consumer) || movesDataOnly(producer);
}

/// A computing producer whose values other ops use too (a value kept for
/// the backward pass) fuses into an all-parallel consumer that reads it
/// element by element and comes before all of those users: the fused loop yields the
/// producer's values as well, the other users read them from it, and the producer is
/// gone. Its work is done once, and the second loop that read its result back is gone.
/// (Upstream's pattern leaves the producer for its other users, which copies its work
/// into the consumer; along a residual stream, x + f(x) layer after layer, the copies
/// nest and the program grows with the square of depth.)
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
      if (succeeded(fuseAndReplace(rewriter, &operand)))
        return success();
    }
    return failure();
  }
};

/// A loop that reads a value through a tensor.expand_shape that only adds
/// unit dimensions (a row's statistic [rows] read as [rows, 1]) reads the
/// value itself, its map without the unit dimensions' indices (each 0):
/// the loop that made the value then fuses with it across the reshape.
struct ReadThroughUnitExpand : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto expand = input->get().getDefiningOp<tensor::ExpandShapeOp>();
      // A matmul's product stays read as it was made (sinter-matmul-bias
      // looks for it at the identity map).
      if (!expand || !expand.getResultType().hasStaticShape() ||
          isa_and_nonnull<linalg::MatmulOp, linalg::BatchMatmulOp>(
              expand.getSrc().getDefiningOp()))
        continue;
      // The positions of the expanded dimensions that are new unit ones:
      // in each group, all but one dimension of size 1 (the group's
      // source dimension is the one left, of any size).
      ArrayRef<int64_t> shape = expand.getResultType().getShape();
      llvm::SmallBitVector dropped(shape.size());
      bool onlyUnits = true;
      for (const ReassociationIndices &group : expand.getReassociationIndices()) {
        auto kept = llvm::find_if(group, [&](int64_t d) { return shape[d] != 1; });
        int64_t keep = kept == group.end() ? group.front() : *kept;
        for (int64_t d : group)
          if (d != keep) {
            dropped.set(d);
            onlyUnits &= shape[d] == 1;
          }
      }
      if (!onlyUnits || dropped.none())
        continue;
      AffineMap map = op.getMatchingIndexingMap(input);
      SmallVector<AffineExpr> kept;
      for (auto [d, e] : llvm::enumerate(map.getResults()))
        if (!dropped.test(d))
          kept.push_back(e);
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps[input->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), map.getNumSymbols(), kept, op.getContext());
      // Every loop must still be some operand's index, or its range is lost.
      bool ranged = llvm::all_of(llvm::seq(op.getNumLoops()), [&](unsigned d) {
        return llvm::any_of(maps, [&](AffineMap m) {
          return llvm::is_contained(m.getResults(), rewriter.getAffineDimExpr(d));
        });
      });
      if (!ranged)
        continue;
      rewriter.modifyOpInPlace(op, [&] {
        input->set(expand.getSrc());
        op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      return success();
    }
    return failure();
  }
};

/// Ops a producer may have for its users to compute it again.
constexpr size_t kMaxRecomputedOps = 8;
/// Rounds of copying cheap producers and fusing the copies.
constexpr int kMaxRecomputeRounds = 4;

/// Whether `producer` adds a bias to a matmul's product: sinter-matmul-bias
/// hands that add to the library, when one loop reads the product.
bool addsToProduct(linalg::GenericOp producer) {
  Block &body = producer.getRegion().front();
  if (body.getOperations().size() != 2 || !isa<arith::AddFOp>(body.front()))
    return false;
  return llvm::any_of(producer.getDpsInputs(), [](Value v) {
    if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>())
      v = expand.getSrc();
    return isa_and_nonnull<linalg::MatmulOp, linalg::BatchMatmulOp>(v.getDefiningOp());
  });
}

/// Whether `producer` is cheap to compute again in each op that reads it: an
/// all-parallel generic of a few ops that reads at most one tensor as large
/// as its loops (the rest are broadcasts: a row's mean, a column's scale),
/// read by two or more generics of its block, each reading it element by
/// element as an input. A user that computes it reads that one tensor
/// instead of the producer's result, the same bytes, and the producer's own
/// pass (a read, and a write of every result) is gone: layer norm's
/// backward pass reads x and dy where it read (x - mean) * rstd and
/// dy * gamma, stored once and read three times.
bool isCheapToRecompute(linalg::GenericOp producer) {
  if (!producer.hasPureTensorSemantics() ||
      producer.getNumLoops() != producer.getNumParallelLoops() ||
      movesDataOnly(producer) ||
      producer.getRegion().front().getOperations().size() > kMaxRecomputedOps + 1 ||
      addsToProduct(producer))
    return false;
  int64_t iterations = 1;
  for (int64_t range : producer.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return false;
    iterations *= range;
  }
  int large = 0;
  for (OpOperand *input : producer.getDpsInputOperands())
    if (auto type = dyn_cast<RankedTensorType>(input->get().getType()))
      large += type.hasStaticShape() && type.getNumElements() == iterations;
  if (large > 1)
    return false;
  for (OpOperand &init : producer.getDpsInitsMutable())
    if (producer.payloadUsesValueFromOperand(&init))
      return false;
  llvm::SmallPtrSet<Operation *, 4> users;
  for (OpOperand &use : producer->getUses()) {
    auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!consumer || consumer->getBlock() != producer->getBlock() ||
        !consumer.isDpsInput(&use) || !readsEachElementOnce(consumer, &use) ||
        !linalg::areElementwiseOpsFusable(&use))
      return false;
    users.insert(consumer);
  }
  return users.size() > 1;
}

/// Gives each user of a cheap producer (isCheapToRecompute) a copy of its
/// own, just before it, which fusion then takes into the user. Whether any
/// producer was copied.
bool copyCheapProducers(ModuleOp module) {
  SmallVector<linalg::GenericOp> producers;
  module.walk([&](linalg::GenericOp op) {
    if (isCheapToRecompute(op))
      producers.push_back(op);
  });
  IRRewriter rewriter(module.getContext());
  for (linalg::GenericOp producer : producers) {
    llvm::SetVector<Operation *> users;
    users.insert(producer->user_begin(), producer->user_end());
    for (Operation *user : users) {
      rewriter.setInsertionPoint(user);
      Operation *copy = rewriter.clone(*producer);
      rewriter.modifyOpInPlace(user, [&] {
        for (OpOperand &operand : user->getOpOperands())
          if (auto result = dyn_cast<OpResult>(operand.get());
              result && result.getOwner() == producer)
            operand.set(copy->getResult(result.getResultNumber()));
      });
    }
    rewriter.eraseOp(producer);
  }
  return !producers.empty();
}

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
  using Base::Base;
  void runOnOperation() override {
    generalizeTransposes(getOperation());
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, fusableAlone);
    patterns.add<FuseKeepingProducerValues, ReadThroughUnitExpand>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    // Fusion makes new cheap producers (a chain fused into one loop), whose
    // copies fuse in turn; each round's copies are larger, so few rounds.
    for (int round = 0; round < kMaxRecomputeRounds; ++round) {
      bool copied = recomputeCheapMaps && copyCheapProducers(getOperation());
      if (failed(applyPatternsGreedily(getOperation(), frozen)))
        return signalPassFailure();
      if (!copied)
        break;
    }
  }
};

} // namespace
} // namespace sinter
