//===- InitAll.cpp - Every Sinter dialect and pass, for all tools ---------===//

#include "compiler/InitAll.h"

#include "dialects/Graph/IR/GraphDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace sinter {

void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, mlir::func::FuncDialect>();
}

void registerAllPasses() {
  // Upstream cleanups are useful on graph IR as well.
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
}

} // namespace sinter
