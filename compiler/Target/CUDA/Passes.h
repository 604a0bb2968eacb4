//===- Passes.h - The CUDA target's passes -----------------------*- C++ -*-===//
#ifndef SINTER_TARGET_CUDA_PASSES_H
#define SINTER_TARGET_CUDA_PASSES_H

#include "mlir/Pass/Pass.h"

namespace sinter::cuda {

#define GEN_PASS_DECL
#include "compiler/Target/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Target/CUDA/Passes.h.inc"

} // namespace sinter::cuda

#endif // SINTER_TARGET_CUDA_PASSES_H
