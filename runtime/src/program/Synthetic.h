//===- Synthetic.h - Synthetic data for a step's inputs -----------------===//
#ifndef SINTER_RT_PROGRAM_SYNTHETIC_H
#define SINTER_RT_PROGRAM_SYNTHETIC_H

#include "data/BatchSource.h"
#include "program/StepPlan.h"

namespace sinter::rt {

/// `numSamples` samples for every input of `plan`, a function of (seed,
/// input name, sample, element) only: floating-point inputs are N(0, 1),
/// integer inputs uniform in [0, the plan's value bound) (2 when the model
/// implies none, at most 2^31), bool inputs fair coins. For benchmarks and
/// smoke tests: made by core/FastSampling.h's samplers, a few ns a value,
/// since the loader makes them while the step runs.
std::unique_ptr<BatchSource> makeSyntheticBatchSource(const StepPlan &plan,
                                                      uint64_t seed,
                                                      uint64_t numSamples);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_SYNTHETIC_H
