//===- InterruptibleMicroBatches.cpp - Steps that stop between micro-batches ===//
//
// A step of many micro-batches can take minutes. A run asked to stop must not
// compute the rest of it: each micro-batch's body asks the runtime first, and
// once the runtime says no, the remaining iterations do nothing.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/CallBuilder.h"
#include "compiler/Target/Host/Passes.h"
#include "runtime/contract/AbiNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace sinter::host {
#define GEN_PASS_DEF_INTERRUPTIBLEMICROBATCHES
#include "compiler/Target/Host/Passes.h.inc"

namespace {

/// Whether `loop`'s own body (not a nested one) loads a micro-batch.
bool loadsMicroBatch(scf::ForOp loop) {
  for (auto call : loop.getBody()->getOps<func::CallOp>())
    if (call.getCallee() == abi::sinter_rt_load_input)
      return true;
  return false;
}

/// for i { body; yield v } becomes
/// for i { r = if (begin(i) != 0) { body; yield v } else { yield args }; yield r }.
void guardBody(ModuleOp module, scf::ForOp loop) {
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  Location loc = loop.getLoc();
  CallBuilder cb(module, &body->front());
  OpBuilder &b = cb.builder();
  Value micro = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                           loop.getInductionVar());
  Value begin = cb.call(loc, abi::sinter_rt_micro_batch_begin, {micro},
                        {b.getI64Type()})[0];
  Value go = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, begin,
                                   cb.constant(loc, 0));
  auto guard = scf::IfOp::create(b, loc, yield.getOperandTypes(), go,
                                 /*withElseRegion=*/true);
  // The body, from after the guard up to the loop's yield, moves into the
  // then-branch, which yields what the loop yielded.
  Block *then = guard.thenBlock();
  Operation *thenYield = then->empty() ? nullptr : &then->back();
  then->getOperations().splice(then->begin(), body->getOperations(),
                               std::next(Block::iterator(guard)),
                               Block::iterator(yield));
  OpBuilder tb = OpBuilder::atBlockEnd(then);
  if (thenYield)
    thenYield->erase();
  scf::YieldOp::create(tb, loc, yield.getOperands());
  Block *otherwise = guard.elseBlock();
  if (!otherwise->empty())
    otherwise->back().erase();
  OpBuilder eb = OpBuilder::atBlockEnd(otherwise);
  scf::YieldOp::create(eb, loc, loop.getRegionIterArgs());
  yield->setOperands(guard.getResults());
}

/// The step's last micro-batch runs outside the loop, so that its backward
/// pass can start the gradient buckets. It cannot be skipped, but the runtime
/// still hears of it (for a stop asked just then, and for traces): a call
/// before its first load, whose answer does not matter, since a dropped
/// step's results are never used.
void announceUnguarded(ModuleOp module, func::CallOp firstLoad) {
  CallBuilder cb(module, firstLoad);
  cb.call(firstLoad.getLoc(), abi::sinter_rt_micro_batch_begin,
          {firstLoad.getOperand(1)}, {cb.builder().getI64Type()});
}

struct InterruptibleMicroBatches
    : public impl::InterruptibleMicroBatchesBase<InterruptibleMicroBatches> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) {
      if (loadsMicroBatch(loop))
        loops.push_back(loop);
    });
    // The first load outside those loops, in each block: a block holds one
    // such micro-batch (the last), however its index was computed.
    SmallVector<func::CallOp> unguarded;
    module.walk([&](func::CallOp call) {
      if (call.getCallee() != abi::sinter_rt_load_input)
        return;
      auto loop = dyn_cast<scf::ForOp>(call->getParentOp());
      if (loop && loadsMicroBatch(loop))
        return;
      if (llvm::none_of(unguarded, [&](func::CallOp seen) {
            return seen->getBlock() == call->getBlock();
          }))
        unguarded.push_back(call);
    });
    for (scf::ForOp loop : loops)
      guardBody(module, loop);
    for (func::CallOp load : unguarded)
      announceUnguarded(module, load);
  }
};

} // namespace
} // namespace sinter::host
