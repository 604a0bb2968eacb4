//===- RegisterAccumulators.cpp - Sums carried in registers, not memory ---===//
//
// A reduction made into loops reads its output element, adds, and writes it
// back on every iteration (a batch-norm's channel sum: 32768 times), so each
// add waits for the store before it, and on a GPU every store goes out to
// L2. Where a loop reads and writes one element whose indices do not change
// inside it, the element is read once before the loop, carried through it
// as a loop value, and written once after.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/RegisterAccumulators.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace sinter::host {
namespace {

/// The stores in `loop`'s body block, when every op in the body (nested
/// regions included) only reads, writes, loops or computes; else none.
SmallVector<memref::StoreOp> bodyStores(scf::ForOp loop) {
  SmallVector<memref::StoreOp> stores;
  bool other = false;
  loop.getBody()->walk([&](Operation *op) {
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (store->getBlock() == loop.getBody())
        stores.push_back(store);
      return;
    }
    if (isa<memref::LoadOp>(op) || op->hasTrait<OpTrait::IsTerminator>() ||
        isa<scf::ForOp>(op) || isMemoryEffectFree(op))
      return;
    other = true; // a call, a copy, an allocation...
  });
  return other ? SmallVector<memref::StoreOp>() : stores;
}

/// Whether `store` is the loop's only write to its buffer.
bool onlyWriteTo(scf::ForOp loop, memref::StoreOp store) {
  bool only = true;
  loop.getBody()->walk([&](memref::StoreOp other) {
    if (other != store && other.getMemRef() == store.getMemRef())
      only = false;
  });
  return only;
}

/// The load of the stored element in the same block, before the store, if
/// it is the loop's only read of that buffer and its indices are defined
/// outside the loop.
memref::LoadOp accumulatorLoad(scf::ForOp loop, memref::StoreOp store) {
  memref::LoadOp found;
  bool other = false;
  loop.getBody()->walk([&](memref::LoadOp load) {
    if (load.getMemRef() != store.getMemRef())
      return;
    if (found || load->getBlock() != loop.getBody() ||
        !llvm::equal(load.getIndices(), store.getIndices()) ||
        !load->isBeforeInBlock(store))
      other = true;
    found = load;
  });
  if (other || !found)
    return {};
  for (Value index : store.getIndices())
    if (!loop.isDefinedOutsideOfLoop(index))
      return {};
  if (!loop.isDefinedOutsideOfLoop(store.getMemRef()))
    return {};
  return found;
}

/// load M[i] before the loop, the loaded value carried as an iter_arg, and
/// store M[i] after it. Returns the loop that carries it.
scf::ForOp carry(IRRewriter &rewriter, scf::ForOp loop, memref::LoadOp load,
                 memref::StoreOp store,
                 llvm::function_ref<void(scf::ForOp, BlockArgument, Value)> carried) {
  rewriter.setInsertionPoint(loop);
  Value initial = memref::LoadOp::create(rewriter, load.getLoc(), load.getMemRef(),
                                         load.getIndices());
  Value stored = store.getValueToStore();
  FailureOr<LoopLikeOpInterface> replaced = loop.replaceWithAdditionalYields(
      rewriter, {initial}, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        return SmallVector<Value>{stored};
      });
  auto newLoop = cast<scf::ForOp>(replaced->getOperation());
  BlockArgument value = newLoop.getRegionIterArgs().back();
  rewriter.replaceAllUsesWith(load.getResult(), value);
  carried(newLoop, value, stored);
  rewriter.setInsertionPointAfter(newLoop);
  memref::StoreOp::create(rewriter, store.getLoc(), newLoop.getResults().back(),
                          store.getMemRef(), store.getIndices());
  rewriter.eraseOp(store);
  rewriter.eraseOp(load);
  return newLoop;
}

} // namespace

void carryAccumulators(
    ArrayRef<scf::ForOp> loops,
    llvm::function_ref<void(scf::ForOp, BlockArgument, Value)> carried) {
  if (loops.empty())
    return;
  IRRewriter rewriter(loops.front()->getContext());
  for (scf::ForOp loop : loops) {
    // One element at a time: each carry makes the loop anew. Other stores
    // write other buffers (a loop's side output), which the plan keeps
    // apart from the accumulator's.
    for (bool carriedOne = true; carriedOne;) {
      carriedOne = false;
      for (memref::StoreOp store : bodyStores(loop)) {
        memref::LoadOp load =
            onlyWriteTo(loop, store) ? accumulatorLoad(loop, store) : memref::LoadOp();
        if (!load)
          continue;
        loop = carry(rewriter, loop, load, store, carried);
        carriedOne = true;
        break;
      }
    }
  }
}

} // namespace sinter::host
