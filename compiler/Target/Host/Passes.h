//===- Passes.h - Host code passes shared by every target -------*- C++ -*-===//
#ifndef SINTER_TARGET_HOST_PASSES_H
#define SINTER_TARGET_HOST_PASSES_H

#include "mlir/Pass/Pass.h"

namespace sinter::host {

#define GEN_PASS_DECL
#include "compiler/Target/Host/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Target/Host/Passes.h.inc"

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_PASSES_H
