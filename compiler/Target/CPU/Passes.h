//===- Passes.h - The CPU target's passes ------------------------*- C++ -*-===//
#ifndef SINTER_TARGET_CPU_PASSES_H
#define SINTER_TARGET_CPU_PASSES_H

#include "mlir/Pass/Pass.h"

namespace sinter::cpu {

#define GEN_PASS_DECL
#include "compiler/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Target/CPU/Passes.h.inc"

} // namespace sinter::cpu

#endif // SINTER_TARGET_CPU_PASSES_H
