//===- DataSources.h - Batch sources from the config's data section -----===//
#ifndef SINTER_RT_PROGRAM_DATASOURCES_H
#define SINTER_RT_PROGRAM_DATASOURCES_H

#include "data/BatchSource.h"
#include "program/StepPlan.h"
#include "runtime/contract/sinter_config.pb.h"

namespace sinter::rt {

/// Opens the `.npy` arrays or token file a DataSource names, with relative
/// paths taken from `baseDir`, and checks them against the step's inputs:
/// every input fed, every per-sample shape equal to the input's.
/// `synthetic {}` (or an empty source) gives deterministic samples from
/// `seed` (program/Synthetic.h).
Expected<std::unique_ptr<BatchSource>>
openDataSource(const config::TrainConfig::DataSource &source,
               const std::string &baseDir, const StepPlan &plan,
               const std::string &what, uint64_t seed);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_DATASOURCES_H
