//===- FusionConditions.h - When a producer may join its consumer -*- C++ -*-===//
//
// What elementwise fusion asks of a producer and its consumer before the
// fused loop takes the consumer's place, and the fusion itself, shared by
// the passes that fuse.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TRANSFORMS_FUSIONCONDITIONS_H
#define SINTER_TRANSFORMS_FUSIONCONDITIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace sinter {

/// Whether every user of `producer`'s results other than `consumer` comes
/// after `consumer` in its block. The fused op takes the consumer's place
/// and yields the producer's results for those users too, so it must come
/// before them; the producer's work then happens once, in the fused op.
inline bool otherUsersFollow(mlir::Operation *producer, mlir::Operation *consumer) {
  // A producer outside the consumer's loop would be computed in every
  // iteration.
  if (producer->getBlock() != consumer->getBlock())
    return false;
  for (mlir::Operation *user : producer->getUsers())
    if (user != consumer &&
        (user->getBlock() != consumer->getBlock() || !consumer->isBeforeInBlock(user)))
      return false;
  return true;
}

/// Whether `consumer` reads `producer` through one operand only and does
/// not write into it: the fused loop then has no other use for the
/// producer's values, and the producer can go.
inline bool readsOnce(mlir::linalg::GenericOp consumer, mlir::Operation *producer) {
  return llvm::count_if(consumer->getOperands(),
                        [&](mlir::Value v) { return v.getDefiningOp() == producer; }) ==
             1 &&
         !llvm::any_of(consumer.getDpsInits(), [&](mlir::Value init) {
           return init.getDefiningOp() == producer;
         });
}

/// Whether `consumer` reads each element of `operand` once: its map is a
/// permutation of the consumer's loops, so no element of a fused producer
/// is computed twice.
inline bool readsEachElementOnce(mlir::linalg::GenericOp consumer,
                                 mlir::OpOperand *operand) {
  return consumer.getMatchingIndexingMap(operand).isPermutation();
}

/// Fuses the producer of `operand` into its consumer (linalg's elementwise
/// fusion, which keeps as results of the fused loop the producer's values
/// that other ops read), points every user of either at the fused loop and
/// erases both. Fails, changing nothing, when linalg cannot fuse them.
inline mlir::LogicalResult fuseAndReplace(mlir::RewriterBase &rewriter,
                                          mlir::OpOperand *operand) {
  mlir::Operation *consumer = operand->getOwner();
  mlir::Operation *producer = operand->get().getDefiningOp();
  mlir::FailureOr<mlir::linalg::ElementwiseOpFusionResult> fused =
      mlir::linalg::fuseElementwiseOps(rewriter, operand);
  if (mlir::failed(fused))
    return mlir::failure();
  for (auto [original, replacement] : fused->replacements)
    rewriter.replaceAllUsesWith(original, replacement);
  rewriter.eraseOp(consumer);
  rewriter.eraseOp(producer);
  return mlir::success();
}

} // namespace sinter

#endif // SINTER_TRANSFORMS_FUSIONCONDITIONS_H
