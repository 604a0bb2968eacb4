//===- Passes.h - Sinter's passes on upstream dialects ----------*- C++ -*-===//
#ifndef SINTER_TRANSFORMS_PASSES_H
#define SINTER_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace sinter {

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

} // namespace sinter

#endif // SINTER_TRANSFORMS_PASSES_H
