//===- Parameters.h - Params and states: initialise, load, save ---------===//
#ifndef SINTER_RT_PROGRAM_PARAMETERS_H
#define SINTER_RT_PROGRAM_PARAMETERS_H

#include "dist/Communicator.h"
#include "program/StepPlan.h"
#include "program/TensorMap.h"

namespace sinter::rt {

/// Fills every param and state of `plan` from its initialiser (LANGUAGE.md
/// section 6): values depend only on (seed, name, element index), so a
/// shard is rank `rank`'s slice of the whole tensor.
Status initialiseParameters(const StepPlan &plan, BufferSet &buffers,
                            uint64_t seed, uint64_t rank = 0);

/// Reads every param and state from a safetensors file (or a checkpoint
/// and its pieces), as PyTorch's strict load_state_dict: a missing or
/// unexpected name, or a dtype or shape that differs, is an error naming
/// it. A shard is rank `rank`'s slice. A checkpoint's optimizer moments
/// (`optimizer.*`) are not parameters and are skipped. Under a tensor_map
/// (another framework's file), each parameter is read from the tensor its
/// rule names, turned when the rule says so, and converted from any float
/// width; the map's `ignore` names may stay unread.
Status loadParameters(const StepPlan &plan, BufferSet &buffers,
                      const std::string &path, uint64_t rank = 0,
                      const TensorMap &map = TensorMap());

/// Writes every param and state to a safetensors file, atomically. Sharded
/// parameters are gathered over `comm`, which every rank then calls it
/// with; rank 0 writes. Under a tensor_map, each is written as its rule
/// names and lays it out, with the map's metadata.
Status saveParameters(const StepPlan &plan, BufferSet &buffers,
                      const std::string &path, Communicator *comm = nullptr,
                      const TensorMap &map = TensorMap());

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_PARAMETERS_H
