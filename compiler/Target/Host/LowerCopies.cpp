//===- LowerCopies.cpp - memref.copy as linalg.copy -----------------------===//

#include "compiler/Target/Host/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace sinter::host {
#define GEN_PASS_DEF_LOWERCOPIES
#include "compiler/Target/Host/Passes.h.inc"

namespace {

/// Whether `a` and `b` are the same elements of one buffer: the same value,
/// or the same subview of one value, made twice.
bool sameElements(Value a, Value b) {
  auto va = a.getDefiningOp<memref::SubViewOp>(), vb = b.getDefiningOp<memref::SubViewOp>();
  return a == b || (va && vb &&
                    OperationEquivalence::isEquivalentTo(
                        va, vb, OperationEquivalence::IgnoreLocations));
}

struct LowerCopies : public impl::LowerCopiesBase<LowerCopies> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      // Bufferization leaves one where a piece was computed in its place.
      if (sameElements(copy.getSource(), copy.getTarget())) {
        copy.erase();
        continue;
      }
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
} // namespace sinter::host
