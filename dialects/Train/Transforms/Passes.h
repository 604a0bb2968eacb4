//===- Passes.h - Passes that build the training step -----------*- C++ -*-===//
#ifndef SINTER_TRAIN_TRANSFORMS_PASSES_H
#define SINTER_TRAIN_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace sinter::train {

#define GEN_PASS_DECL
#include "dialects/Train/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/Train/Transforms/Passes.h.inc"

} // namespace sinter::train

#endif // SINTER_TRAIN_TRANSFORMS_PASSES_H
