//===- Optimizer.h - The runtime's part of the update ------------------===//
//
// The compiled train step updates its parameters itself (SGD or AdamW with
// PyTorch's formulas, clipping by the global norm). The runtime computes
// what changes from step to step or with the config: the learning-rate
// schedule and the scalars the update reads, and it checks that the config
// asks for the update that was compiled.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_OPTIMIZER_H
#define SINTER_RT_PROGRAM_OPTIMIZER_H

#include "program/StepPlan.h"
#include "runtime/contract/sinter_config.pb.h"
#include "runtime/contract/abi.h"

#include <array>
#include <string>

namespace sinter::rt {

/// The learning rate of optimizer step `step` (0-based) of `totalSteps`:
/// linear warm-up from lr/warmup to lr over `warmup_steps`, then constant,
/// cosine decay to `min_lr` or linear decay to `end_lr` over the rest; all
/// of it times learningRateScale(cfg).
double scheduledLearningRate(const config::TrainConfig &cfg, int64_t step);

/// lr_scaling's factor: 1 (NONE), G / base (LINEAR) or sqrt(G / base)
/// (SQRT), with G = batch.global (DOMAIN.md 2).
double learningRateScale(const config::TrainConfig &cfg);

/// One line for the log: the rate the optimizer uses and where it comes from.
std::string describeLearningRate(const config::TrainConfig &cfg);

/// The scalars the compiled update reads (abi.h's sinter_hyperparameter),
/// indexed by it.
using UpdateScalars = std::array<double, SINTER_HP_COUNT>;

/// The scalars of optimizer step `step` (0-based), the `update`-th update
/// of the run (1 for the first): the scheduled rate, the config's decay,
/// betas, eps, momentum and clipping.
UpdateScalars updateScalars(const config::TrainConfig &cfg, int64_t step,
                            int64_t update);

/// Scalars that make a train step compute its gradients and leave its
/// parameters and moments as they are (--gradients).
UpdateScalars gradientsOnly();

/// The compiled update of a config: "adamw", "sgd" or "sgd_momentum" (the
/// plan's names).
std::string compiledOptimizerOf(const config::TrainConfig &cfg);

/// Fails unless `cfg` asks for the update compiled into `plan`: the kind of
/// optimizer and its moments are fixed when sinterc compiles; its scalars
/// are not.
Status checkCompiledOptimizer(const config::TrainConfig &cfg,
                              const StepPlan &plan);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_OPTIMIZER_H
