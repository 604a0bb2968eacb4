//===- Trainer.h - The training loop of a program -----------------------===//
#ifndef SINTER_RT_PROGRAM_TRAINER_H
#define SINTER_RT_PROGRAM_TRAINER_H

#include "data/BatchSource.h"
#include "dist/Communicator.h"
#include "program/Evaluator.h"
#include "program/Interrupt.h"
#include "program/Optimizer.h"

#include <memory>

namespace sinter::rt {

/// A compiled step with its plan and buffers.
struct StepRun {
  const StepPlan *plan = nullptr;
  BufferSet *buffers = nullptr;
  StepFn fn = nullptr;
};

/// Trains for cfg.steps optimizer steps: each step hands the train step its
/// k = batch.global / batch.micro micro-batches of `trainData` (sampled as
/// DistributedSampler does); the step sums the gradients over the global
/// batch, clips them and updates the parameters itself, reading this step's
/// learning rate and the optimizer's scalars from the runtime, and returns
/// the loss, the gradients' norm and the mean metrics and new states. A
/// non-finite loss or gradient stops the run. Logs every log.every steps
/// and evaluates every eval.every steps with `eval` when given. Saves a
/// checkpoint every checkpoint.every steps and at the end (checkpoint.dir),
/// and resumes from the newest one when checkpoint.resume is set.
Status train(const config::TrainConfig &cfg, Communicator &comm,
             StepRun trainStep,
             std::shared_ptr<const BatchSource> trainData, StepRun *evalStep,
             std::shared_ptr<const BatchSource> evalData);

/// What a train step's plan fixed when it was compiled, against `cfg`: its
/// micro-batch (batch.micro) and its optimizer. Checked before the step's
/// buffers are allocated and filled, so a wrong config is named at once.
Status checkCompiledTraining(const config::TrainConfig &cfg, const StepPlan &plan);

/// Copies params and states from one step's buffers to another's, by name.
Status copyParameters(const StepPlan &from, BufferSet &src, const StepPlan &to,
                      BufferSet &dst);

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_TRAINER_H
