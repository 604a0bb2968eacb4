//===- LowerCopies.cpp - memref.copy as linalg.copy -----------------------===//

#include "compiler/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace sinter::cpu {
#define GEN_PASS_DEF_CPULOWERCOPIES
#include "compiler/Target/CPU/Passes.h.inc"
} // namespace sinter::cpu

using namespace mlir;

namespace sinter::cpu {
namespace {

struct CPULowerCopies : public impl::CPULowerCopiesBase<CPULowerCopies> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
} // namespace sinter::cpu
