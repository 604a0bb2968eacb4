//===- Optimizer.cpp - Learning-rate schedules, clipping, SGD and AdamW -===//

#include "program/Optimizer.h"

#include "program/Convert.h"

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

Expected<Optimizer> Optimizer::create(const config::TrainConfig &cfg,
                                      const StepPlan &plan) {
  Optimizer o;
  o.cfg = cfg;
  for (size_t g = 0; g < plan.buffers.size(); ++g) {
    const BufferSpec &grad = plan.buffers[g];
    if (grad.kind != BufferKind::Gradient)
      continue;
    const BufferSpec *p = plan.find(grad.name, BufferKind::Param);
    if (!p)
      return Status::error("internal error: gradient of unknown parameter '" +
                           grad.name + "'");
    Slot s;
    s.name = grad.name;
    s.param = size_t(p - plan.buffers.data());
    s.gradient = g;
    s.size = p->byteSize / dtypeSize(p->dtype);
    s.dtype = p->dtype;
    s.decay = p->shape.size() >= 2 || cfg.optimizer().decay_1d_params();
    o.params.push_back(std::move(s));
  }
  return o;
}

double Optimizer::gradientNorm(
    const std::vector<std::vector<double>> &grads) const {
  double sum = 0;
  for (const std::vector<double> &g : grads)
    for (double x : g)
      sum += x * x;
  return std::sqrt(sum);
}

void Optimizer::step(BufferSet &buffers,
                     const std::vector<std::vector<double>> &grads, double lr) {
  ++t;
  const auto &opt = cfg.optimizer();
  std::vector<double> p;
  for (size_t i = 0; i < params.size(); ++i) {
    Slot &s = params[i];
    const std::vector<double> &g = grads[i];
    p.resize(s.size);
    (void)convertElements(buffers.data(s.param), s.dtype, p.data(), DType::F64,
                          s.size);
    if (opt.has_sgd()) {
      const auto &sgd = opt.sgd();
      double wd = s.decay ? sgd.weight_decay() : 0.0, mu = sgd.momentum();
      if (mu > 0 && s.m.empty())
        s.m.assign(s.size, 0.0);
      for (uint64_t j = 0; j < s.size; ++j) {
        double d = g[j] + wd * p[j];
        if (mu > 0) {
          // torch.optim.SGD: the first step's buffer is the gradient itself.
          s.m[j] = t == 1 ? d : mu * s.m[j] + d;
          d = sgd.nesterov() ? d + mu * s.m[j] : s.m[j];
        }
        p[j] -= lr * d;
      }
    } else {
      const auto &adam = opt.adamw();
      double b1 = adam.beta1(), b2 = adam.beta2(), eps = adam.eps();
      double wd = s.decay ? adam.weight_decay() : 0.0;
      if (s.m.empty()) {
        s.m.assign(s.size, 0.0);
        s.v.assign(s.size, 0.0);
      }
      double c1 = 1 - std::pow(b1, double(t)), c2 = 1 - std::pow(b2, double(t));
      double stepSize = lr / c1, root2 = std::sqrt(c2);
      for (uint64_t j = 0; j < s.size; ++j) {
        p[j] *= 1 - lr * wd; // decoupled weight decay, first
        s.m[j] = b1 * s.m[j] + (1 - b1) * g[j];
        s.v[j] = b2 * s.v[j] + (1 - b2) * g[j] * g[j];
        double denom = std::sqrt(s.v[j]) / root2 + eps;
        p[j] -= stepSize * s.m[j] / denom;
      }
    }
    (void)convertElements(p.data(), DType::F64, buffers.data(s.param), s.dtype,
                          s.size);
  }
}

} // namespace sinter::rt
