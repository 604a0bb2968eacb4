//===- TrainDialect.cpp - The Sinter train dialect ------------------------===//

#include "dialects/Train/IR/TrainDialect.h"

#include "dialects/Train/IR/TrainOps.h"

using namespace mlir;
using namespace sinter::train;

#include "dialects/Train/IR/TrainDialect.cpp.inc"

void TrainDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Train/IR/TrainOps.cpp.inc"
      >();
}
