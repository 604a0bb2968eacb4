//===- Optimizer.cpp - The runtime's part of the update ----------------===//

#include "program/Optimizer.h"

#include <cmath>
#include <cstdio>

namespace sinter::rt {

namespace {

double writtenLearningRate(const config::TrainConfig &cfg) {
  const auto &opt = cfg.optimizer();
  return opt.has_sgd() ? opt.sgd().lr() : opt.adamw().lr();
}

double unscaledLearningRate(const config::TrainConfig &cfg, int64_t step) {
  double lr = writtenLearningRate(cfg);
  const auto &s = cfg.schedule();
  int64_t warmup = s.warmup_steps(), total = cfg.steps();
  if (step < warmup)
    return lr * double(step + 1) / double(warmup);
  double progress =
      total > warmup ? double(step - warmup) / double(total - warmup) : 1.0;
  progress = std::min(std::max(progress, 0.0), 1.0);
  if (s.has_cosine()) {
    double low = s.cosine().min_lr();
    return low + (lr - low) * 0.5 * (1 + std::cos(M_PI * progress));
  }
  if (s.has_linear())
    return lr + (s.linear().end_lr() - lr) * progress;
  return lr;
}

} // namespace

double learningRateScale(const config::TrainConfig &cfg) {
  using Rule = config::TrainConfig::LrScaling;
  const auto &ls = cfg.lr_scaling();
  if (ls.rule() == Rule::NONE || ls.base_global_batch() <= 0)
    return 1.0;
  double ratio = double(cfg.batch().global()) / double(ls.base_global_batch());
  return ls.rule() == Rule::LINEAR ? ratio : std::sqrt(ratio);
}

double scheduledLearningRate(const config::TrainConfig &cfg, int64_t step) {
  return unscaledLearningRate(cfg, step) * learningRateScale(cfg);
}

std::string describeLearningRate(const config::TrainConfig &cfg) {
  using Rule = config::TrainConfig::LrScaling;
  const auto &ls = cfg.lr_scaling();
  double lr = writtenLearningRate(cfg);
  char line[256];
  if (ls.rule() == Rule::NONE) {
    std::snprintf(line, sizeof line, "learning rate %.6g (as written)", lr);
    return line;
  }
  std::snprintf(line, sizeof line,
                "learning rate %.6g = %.6g x %s(%lld / %lld) (lr_scaling %s "
                "from base_global_batch %lld to batch.global %lld)",
                lr * learningRateScale(cfg), lr,
                ls.rule() == Rule::SQRT ? "sqrt" : "",
                (long long)cfg.batch().global(),
                (long long)ls.base_global_batch(),
                Rule::Rule_Name(ls.rule()).c_str(),
                (long long)ls.base_global_batch(),
                (long long)cfg.batch().global());
  return line;
}

UpdateScalars updateScalars(const config::TrainConfig &cfg, int64_t step,
                            int64_t update) {
  UpdateScalars s{};
  const auto &opt = cfg.optimizer();
  double decay = 0;
  if (opt.has_sgd()) {
    decay = opt.sgd().weight_decay();
    s[SINTER_HP_MOMENTUM] = opt.sgd().momentum();
    s[SINTER_HP_NESTEROV] = opt.sgd().nesterov() ? 1 : 0;
  } else {
    decay = opt.adamw().weight_decay();
    s[SINTER_HP_BETA1] = opt.adamw().beta1();
    s[SINTER_HP_BETA2] = opt.adamw().beta2();
    s[SINTER_HP_EPS] = opt.adamw().eps();
  }
  s[SINTER_HP_LR] = scheduledLearningRate(cfg, step);
  s[SINTER_HP_STEP] = double(update);
  s[SINTER_HP_WEIGHT_DECAY] = decay;
  s[SINTER_HP_WEIGHT_DECAY_1D] = opt.decay_1d_params() ? decay : 0.0;
  s[SINTER_HP_MAX_GRAD_NORM] = cfg.clip_grad_norm();
  s[SINTER_HP_APPLY] = 1;
  return s;
}

UpdateScalars gradientsOnly() {
  UpdateScalars s{};
  s[SINTER_HP_STEP] = 1;
  return s; // SINTER_HP_APPLY = 0
}

std::string compiledOptimizerOf(const config::TrainConfig &cfg) {
  const auto &opt = cfg.optimizer();
  if (!opt.has_sgd())
    return "adamw";
  return opt.sgd().momentum() > 0 ? "sgd_momentum" : "sgd";
}

Status checkCompiledOptimizer(const config::TrainConfig &cfg,
                              const StepPlan &plan) {
  std::string wanted = compiledOptimizerOf(cfg);
  // Momentum 0 with momentum buffers is plain SGD.
  if (plan.optimizer.empty() || plan.optimizer == wanted ||
      (plan.optimizer == "sgd_momentum" && wanted == "sgd"))
    return Status::success();
  auto describe = [](const std::string &kind) -> std::string {
    if (kind == "sgd_momentum")
      return "sgd with momentum";
    if (kind == "sgd")
      return "sgd without momentum";
    return kind;
  };
  return Status::error("optimizer: the program was compiled for " +
                       describe(plan.optimizer) + " but the config asks for " +
                       describe(wanted) +
                       "; the optimizer's kind and moments are fixed when "
                       "sinterc compiles (its rates, betas and decay are not): "
                       "recompile with this config");
}

} // namespace sinter::rt
