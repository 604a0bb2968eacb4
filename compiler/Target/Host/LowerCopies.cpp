//===- LowerCopies.cpp - memref.copy as linalg.copy -----------------------===//

#include "compiler/Target/Host/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

namespace sinter::host {
#define GEN_PASS_DEF_LOWERCOPIES
#include "compiler/Target/Host/Passes.h.inc"
} // namespace sinter::host

using namespace mlir;

namespace sinter::host {
namespace {

struct LowerCopies : public impl::LowerCopiesBase<LowerCopies> {
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
} // namespace sinter::host
