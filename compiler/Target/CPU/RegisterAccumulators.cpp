//===- RegisterAccumulators.cpp - Sums carried in registers, not memory ---===//
//
// The CPU's use of host::carryAccumulators: a carried sum may be summed in
// any order, so LLVM vectorizes it, and its loop stays rolled.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/Host/RegisterAccumulators.h"
#include "compiler/Target/CPU/LoopHints.h"
#include "compiler/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace sinter::cpu {
#define GEN_PASS_DEF_CPUREGISTERACCUMULATORS
#include "compiler/Target/CPU/Passes.h.inc"

namespace {

struct CPURegisterAccumulators
    : public impl::CPURegisterAccumulatorsBase<CPURegisterAccumulators> {
  void runOnOperation() override {
    // Post-order: inner loops first, so their loads and stores move into
    // the loop around them, which is then taken in turn.
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    host::carryAccumulators(
        loops, [](scf::ForOp loop, BlockArgument value, Value stored) {
          // A plain sum may be summed in any order, so LLVM keeps several
          // partial sums in vector lanes; the order still depends only on the
          // shapes and the machine's vector width, never on the threads.
          if (auto add = stored.getDefiningOp<arith::AddFOp>())
            if (add.getLhs() == value || add.getRhs() == value)
              add.setFastmath(add.getFastmath() | arith::FastMathFlags::reassoc);
          keepRolled(loop);
        });
  }
};

} // namespace
} // namespace sinter::cpu
