//===- TrainOps.h - The Sinter train dialect's ops --------------*- C++ -*-===//
#ifndef SINTER_TRAIN_TRAINOPS_H
#define SINTER_TRAIN_TRAINOPS_H

#include "dialects/Train/IR/TrainDialect.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/Train/IR/TrainOps.h.inc"

#endif // SINTER_TRAIN_TRAINOPS_H
