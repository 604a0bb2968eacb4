//===- Evaluator.h - Running the eval step over a data set --------------===//
#ifndef SINTER_RT_PROGRAM_EVALUATOR_H
#define SINTER_RT_PROGRAM_EVALUATOR_H

#include "data/BatchSource.h"
#include "program/StepPlan.h"
#include "program/TrainStep.h"

#include <map>
#include <memory>

namespace sinter::rt {

struct EvalResult {
  uint64_t batches = 0;
  uint64_t samples = 0;
  double seconds = 0;
  double loss = 0;
  std::vector<std::pair<std::string, double>> metrics;
};

/// Copies a gathered micro-batch into the step's input buffers, converting
/// dtypes (e.g. int64 labels into an i32 input).
Status feedInputs(const StepPlan &plan, BufferSet &buffers,
                  const std::vector<HostTensor> &tensors);

/// Runs the train step once on the first micro-batch of `source` as the
/// whole global batch and writes each
/// parameter's gradient to DIR/NAME.npy; returns the loss.
Expected<double> writeGradients(const StepPlan &plan, BufferSet &buffers,
                                StepFn step, const BatchSource &source,
                                const std::string &dir);

/// Feeds `batches` consecutive micro-batches of `source` (0: every full
/// micro-batch) through `step` and averages the loss and the metrics over
/// them. A prefetch thread gathers the next batches while the step runs. The
/// incomplete last micro-batch is not evaluated: the step's shapes are fixed,
/// and padding would bias a mean. A step whose parameters are sharded
/// gathers them over `comm`: every rank then evaluates the same batches.
/// With `outputsDir`, each `output` over all batches goes to
/// outputsDir/NAME.npy, concatenated along the batch dimension when it
/// leads with the micro-batch size, else stacked: written as each batch
/// comes, so that outputs larger than memory (a GPT's logits over an
/// eval set) need none.
Expected<EvalResult> evaluate(const StepPlan &plan, BufferSet &buffers,
                              StepFn step,
                              std::shared_ptr<const BatchSource> source,
                              uint64_t batches, bool progress,
                              Communicator *comm = nullptr,
                              const std::string &outputsDir = "");

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_EVALUATOR_H
