//===- Parameters.h - Params and states: initialise, load, save ---------===//
#ifndef SINTER_RT_PROGRAM_PARAMETERS_H
#define SINTER_RT_PROGRAM_PARAMETERS_H

#include "program/StepPlan.h"

namespace sinter::rt {

/// Fills every param and state of `plan` from its initialiser (LANGUAGE.md
/// section 6): values depend only on (seed, name, element index).
Status initialiseParameters(const StepPlan &plan, BufferSet &buffers,
                            uint64_t seed);

/// Reads every param and state from a safetensors file, as PyTorch's strict
/// load_state_dict: a missing or unexpected name, or a dtype or shape that
/// differs, is an error naming it. A checkpoint's optimizer moments
/// (`optimizer.*`) are not parameters and are skipped.
Status loadParameters(const StepPlan &plan, BufferSet &buffers,
                      const std::string &path);

/// Writes every param and state to a safetensors file, atomically.
Status saveParameters(const StepPlan &plan, BufferSet &buffers,
                      const std::string &path);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_PARAMETERS_H
