//===- TrainDialect.h - The Sinter train dialect ----------------*- C++ -*-===//
#ifndef SINTER_TRAIN_TRAINDIALECT_H
#define SINTER_TRAIN_TRAINDIALECT_H

#include "mlir/IR/Dialect.h"

#include "dialects/Train/IR/TrainDialect.h.inc"

#endif // SINTER_TRAIN_TRAINDIALECT_H
