//===- Passes.h - Conversions out of Sinter's dialects ----------*- C++ -*-===//
#ifndef SINTER_CONVERSION_PASSES_H
#define SINTER_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace sinter {

#define GEN_PASS_DECL
#include "compiler/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Conversion/Passes.h.inc"

} // namespace sinter

#endif // SINTER_CONVERSION_PASSES_H
