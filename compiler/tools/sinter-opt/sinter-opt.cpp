//===- sinter-opt.cpp - mlir-opt with every Sinter dialect and pass -------===//

#include "compiler/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  sinter::registerAllDialects(registry);
  sinter::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Sinter optimizer driver\n", registry));
}
