//===- Optimizer.h - Learning-rate schedules, clipping, SGD and AdamW ---===//
//
// The update a training step ends with, applied by the runtime to the
// parameter buffers from the gradients the compiled step returns. The
// formulas are PyTorch's (torch.optim.SGD, torch.optim.AdamW,
// clip_grad_norm_), so a run can be compared with it number for number.
//
//===----------------------------------------------------------------------===//
#ifndef SINTER_RT_PROGRAM_OPTIMIZER_H
#define SINTER_RT_PROGRAM_OPTIMIZER_H

#include "program/StepPlan.h"
#include "runtime/config/sinter_config.pb.h"

#include <vector>

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

class Optimizer {
public:
  /// One slot per parameter of `plan` that has a gradient.
  static Expected<Optimizer> create(const config::TrainConfig &cfg,
                                    const StepPlan &plan);

  /// The global L2 norm of the gradients (`grads[i]` for parameter slot i).
  double gradientNorm(const std::vector<std::vector<double>> &grads) const;

  /// Applies one update with learning rate `lr` to the parameter buffers.
  /// Gradients are in f64 (accumulated over micro-batches); parameters keep
  /// their dtype.
  void step(BufferSet &buffers, const std::vector<std::vector<double>> &grads,
            double lr);

  /// Parameter slots: the buffer index of the parameter and of its gradient.
  struct Slot {
    std::string name;
    size_t param = 0;
    size_t gradient = 0;
    uint64_t size = 0;
    DType dtype = DType::F32;
    bool decay = true;
    std::vector<double> m, v; ///< momentum / first and second moments
  };
  const std::vector<Slot> &slots() const { return params; }
  std::vector<Slot> &slots() { return params; }
  int64_t stepsTaken() const { return t; }
  void setStepsTaken(int64_t steps) { t = steps; }

private:
  config::TrainConfig cfg;
  std::vector<Slot> params;
  int64_t t = 0;
};

} // namespace sinter::rt

#endif // SINTER_RT_PROGRAM_OPTIMIZER_H
