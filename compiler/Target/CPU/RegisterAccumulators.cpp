//===- RegisterAccumulators.cpp - Sums carried in registers, not memory ---===//
//
// A reduction made into loops reads its output element, adds, and writes it
// back on every iteration (a batch-norm's channel sum: 32768 times), so each
// add waits for the store before it. Where a loop reads and writes one
// element whose indices do not change inside it, the element is read once
// before the loop, carried through it as a loop value, and written once
// after. Loops are taken innermost first, so a nest of them carries the sum
// all the way out.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/LoopHints.h"
#include "compiler/Target/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace sinter::cpu {
#define GEN_PASS_DEF_CPUREGISTERACCUMULATORS
#include "compiler/Target/CPU/Passes.h.inc"
} // namespace sinter::cpu

using namespace mlir;

namespace sinter::cpu {
namespace {

/// The one store in `loop`'s body (nested regions included), if it sits in
/// the body's own block and every other op there only reads or computes.
memref::StoreOp soleStore(scf::ForOp loop) {
  memref::StoreOp store;
  bool other = false;
  loop.getBody()->walk([&](Operation *op) {
    if (auto s = dyn_cast<memref::StoreOp>(op)) {
      if (store || s->getBlock() != loop.getBody())
        other = true;
      store = s;
      return;
    }
    if (isa<memref::LoadOp>(op) || op->hasTrait<OpTrait::IsTerminator>() ||
        isa<scf::ForOp>(op) || isMemoryEffectFree(op))
      return;
    other = true; // a call, a copy, an allocation...
  });
  return other ? memref::StoreOp() : store;
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
        !llvm::equal(load.getIndices(), store.getIndices()) || !load->isBeforeInBlock(store))
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
/// store M[i] after it.
void carry(IRRewriter &rewriter, scf::ForOp loop, memref::LoadOp load,
           memref::StoreOp store) {
  rewriter.setInsertionPoint(loop);
  Value initial = memref::LoadOp::create(rewriter, load.getLoc(), load.getMemRef(),
                                         load.getIndices());
  Value stored = store.getValueToStore();
  FailureOr<LoopLikeOpInterface> carried = loop.replaceWithAdditionalYields(
      rewriter, {initial}, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        return SmallVector<Value>{stored};
      });
  auto newLoop = cast<scf::ForOp>(carried->getOperation());
  BlockArgument value = newLoop.getRegionIterArgs().back();
  rewriter.replaceAllUsesWith(load.getResult(), value);
  // A plain sum may be summed in any order, so LLVM keeps several partial
  // sums in vector lanes; the order still depends only on the shapes and
  // the machine's vector width, never on the threads.
  if (auto add = stored.getDefiningOp<arith::AddFOp>())
    if (add.getLhs() == value || add.getRhs() == value)
      add.setFastmath(add.getFastmath() | arith::FastMathFlags::reassoc);
  keepRolled(newLoop);
  rewriter.setInsertionPointAfter(newLoop);
  memref::StoreOp::create(rewriter, store.getLoc(), newLoop.getResults().back(),
                          store.getMemRef(), store.getIndices());
  rewriter.eraseOp(store);
  rewriter.eraseOp(load);
}

struct CPURegisterAccumulators
    : public impl::CPURegisterAccumulatorsBase<CPURegisterAccumulators> {
  void runOnOperation() override {
    // Post-order: inner loops first, so their loads and stores move into
    // the loop around them, which is then taken in turn.
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      memref::StoreOp store = soleStore(loop);
      if (!store)
        continue;
      if (memref::LoadOp load = accumulatorLoad(loop, store))
        carry(rewriter, loop, load, store);
    }
  }
};

} // namespace
} // namespace sinter::cpu
