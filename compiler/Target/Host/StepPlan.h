//===- StepPlan.h - A compiled step's plan, complete ------------*- C++ -*-===//
//
// RecordPlan writes a step's buffers into `sinter.plan` before
// bufferization; the memory planner adds the arena afterwards. This joins
// them into the bytes the program embeds (sinter_plan.proto).
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_TARGET_HOST_STEPPLAN_H
#define SINTER_TARGET_HOST_STEPPLAN_H

#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace sinter::host {

/// The plan of `step` (a function after sinter-plan-memory, or its LLVM
/// form) with its arena as the WORKSPACE buffer; nullopt for a function
/// that is no step.
std::optional<std::string> completePlan(mlir::Operation *step);

} // namespace sinter::host

#endif // SINTER_TARGET_HOST_STEPPLAN_H
