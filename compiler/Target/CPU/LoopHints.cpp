//===- LoopHints.cpp - What LLVM is told about a loop ---------------------===//

#include "compiler/Target/CPU/LoopHints.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace sinter::cpu {

void keepRolled(scf::ForOp loop) {
  MLIRContext *context = loop.getContext();
  auto disable = BoolAttr::get(context, true);
  auto unroll = LLVM::LoopUnrollAttr::get(context, disable, {}, {}, {}, {}, {}, {});
  auto annotation = LLVM::LoopAnnotationAttr::get(
      context, {}, {}, {}, unroll, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});
  // The name of llvm.br's annotation: scf-to-cf copies the LLVM dialect's
  // attributes of an scf.for onto the branch that closes it.
  loop->setAttr("loop_annotation", annotation);
}

} // namespace sinter::cpu
