//===- Trainer.cpp - The training loop of a program ---------------------===//

#include "program/Trainer.h"

#include "data/Prefetcher.h"
#include "program/Checkpoint.h"
#include "program/Convert.h"
#include "program/TrainStep.h"
#include "runtime/config/ConfigLoader.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace sinter::rt {

namespace {
std::atomic<int> pendingSignal{0};
void onSignal(int signal) { pendingSignal.store(signal); }
} // namespace

const char *const kInterrupted = "interrupted";

void installInterruptHandlers() {
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
}

int interruptSignal() { return pendingSignal.load(); }

void copyParameters(const StepPlan &from, const BufferSet &src,
                    const StepPlan &to, BufferSet &dst) {
  for (size_t i = 0; i < to.buffers.size(); ++i) {
    const BufferSpec &b = to.buffers[i];
    if (b.kind != BufferKind::Param && b.kind != BufferKind::State)
      continue;
    if (const BufferSpec *s = from.find(b.name, b.kind))
      std::memcpy(dst.data(i), src.data(size_t(s - from.buffers.data())),
                  b.byteSize);
  }
}

namespace {

std::vector<double> asDoubles(const void *p, DType t, uint64_t n) {
  std::vector<double> v(n);
  (void)convertElements(p, t, v.data(), DType::F64, n);
  return v;
}

/// What one train step returned, in f64.
struct StepValues {
  double loss = 0;
  std::vector<double> metrics;
  std::vector<std::vector<double>> grads; ///< per optimizer slot
};

} // namespace

Status train(const config::TrainConfig &cfg, StepRun run,
             std::shared_ptr<const BatchSource> trainData, StepRun *evalRun,
             std::shared_ptr<const BatchSource> evalData) {
  const StepPlan &plan = *run.plan;
  BufferSet &buffers = *run.buffers;
  uint64_t b = plan.microBatch();
  if (int64_t(b) != cfg.batch().micro())
    return Status::error("batch.micro is " + std::to_string(cfg.batch().micro()) +
                         " but the program was compiled for micro-batches of " +
                         std::to_string(b) + "; recompile with the new value");
  std::string error;
  int64_t k = config::accumulationSteps(cfg, 1, error);
  if (k < 1)
    return Status::error(error);

  SamplerOptions order;
  order.numSamples = trainData->numSamples();
  order.globalBatch = uint64_t(cfg.batch().global());
  order.microBatch = b;
  order.seed = cfg.seed();
  order.shuffle = cfg.data().shuffle();
  order.dropLast = cfg.data().drop_last();
  Expected<Sampler> sampler = Sampler::create(order);
  if (!sampler.ok())
    return sampler.status().withPrefix("data.train: ");
  Expected<Optimizer> optimizer = Optimizer::create(cfg, plan);
  if (!optimizer.ok())
    return optimizer.status();

  // Resume: the newest checkpoint of checkpoint.dir, when asked to.
  const auto &ck = cfg.checkpoint();
  int64_t first = 0;
  if (ck.resume() && !ck.dir().empty()) {
    std::string latest = latestCheckpoint(ck.dir());
    if (!latest.empty()) {
      Expected<int64_t> step =
          loadCheckpoint(latest, cfg.seed(), plan, buffers, *optimizer);
      if (!step.ok())
        return step.status().withPrefix("resuming: ");
      first = *step;
      std::printf("resumed from %s at step %lld\n", latest.c_str(),
                  (long long)first);
    }
  }
  if (first >= cfg.steps())
    return Status::success();

  PrefetcherOptions ahead;
  ahead.start = sampler->positionOf(uint64_t(first));
  ahead.numSteps = uint64_t(cfg.steps() - first);
  auto batches = Prefetcher::start(sampler.take(), trainData, ahead);
  if (!batches.ok())
    return batches.status();
  std::vector<size_t> metricBuffers, stateOut;
  std::vector<std::string> metricNames;
  size_t lossBuffer = 0;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &spec = plan.buffers[i];
    if (spec.kind == BufferKind::Loss)
      lossBuffer = i;
    if (spec.kind == BufferKind::Metric) {
      metricBuffers.push_back(i);
      metricNames.push_back(spec.name);
    }
    if (spec.kind == BufferKind::StateOut)
      stateOut.push_back(i);
  }

  std::printf("%s; %lld micro-batches of %llu per step\n",
              describeLearningRate(cfg).c_str(), (long long)k,
              (unsigned long long)b);
  std::fflush(stdout);
  auto start = std::chrono::steady_clock::now();
  uint64_t samplesSinceLog = 0;
  std::string checkpointDir = ck.dir().empty() ? "checkpoints" : ck.dir();
  for (int64_t step = first; step < cfg.steps(); ++step) {
    // The step loops over its k micro-batches itself; it sums the loss and
    // gradients (each micro-batch's loss is its exact share of the global
    // batch's) and averages metrics and new states.
    TrainStepWorld world;
    world.globalBatch = uint64_t(cfg.batch().global());
    world.seed = cfg.seed();
    world.step = uint64_t(step);
    for (int64_t micro = 0; micro < k; ++micro) {
      Expected<MicroBatch> batch = (*batches)->next();
      if (!batch.ok())
        return batch.status();
      world.microBatches.push_back(std::move(batch->tensors));
    }
    SINTER_RT_RETURN_IF_ERROR(runTrainStep(run.fn, plan, buffers, world));
    StepValues sums;
    sums.loss = asDoubles(buffers.data(lossBuffer),
                          plan.buffers[lossBuffer].dtype, 1)[0];
    for (size_t m : metricBuffers)
      sums.metrics.push_back(
          asDoubles(buffers.data(m), plan.buffers[m].dtype, 1)[0]);
    for (const Optimizer::Slot &slot : optimizer->slots())
      sums.grads.push_back(asDoubles(buffers.data(slot.gradient),
                                     plan.buffers[slot.gradient].dtype,
                                     slot.size));
    if (!std::isfinite(sums.loss))
      return Status::error("step " + std::to_string(step + 1) + ": the loss is " +
                           std::to_string(sums.loss) +
                           "; lower the learning rate or check the data");
    for (size_t s = 0; s < sums.grads.size(); ++s)
      for (double x : sums.grads[s])
        if (!std::isfinite(x))
          return Status::error("step " + std::to_string(step + 1) +
                               ": the gradient of '" +
                               optimizer->slots()[s].name +
                               "' is not finite; lower the learning rate or "
                               "clip gradients (clip_grad_norm)");
    // States move once per step, to the mean the step computed (DOMAIN.md 4).
    for (size_t i : stateOut) {
      const BufferSpec &spec = plan.buffers[i];
      if (const BufferSpec *state = plan.find(spec.name, BufferKind::State))
        std::memcpy(buffers.data(size_t(state - plan.buffers.data())),
                    buffers.data(i), spec.byteSize);
    }
    double norm = optimizer->gradientNorm(sums.grads);
    if (cfg.clip_grad_norm() > 0) {
      double clip = std::min(1.0, cfg.clip_grad_norm() / (norm + 1e-6));
      if (clip < 1.0)
        for (std::vector<double> &g : sums.grads)
          for (double &x : g)
            x *= clip;
    }
    double lr = scheduledLearningRate(cfg, step);
    optimizer->step(buffers, sums.grads, lr);
    samplesSinceLog += uint64_t(cfg.batch().global());

    bool last = step + 1 == cfg.steps();
    bool periodic = ck.every() > 0 && (step + 1) % ck.every() == 0;
    int signal = interruptSignal();
    if ((!ck.dir().empty() && (periodic || last)) || signal) {
      Expected<std::string> saved =
          saveCheckpoint(checkpointDir, ck.keep(), step + 1, cfg.seed(), plan,
                         buffers, *optimizer);
      if (!saved.ok())
        return saved.status();
      if (signal) {
        std::printf("interrupted at step %lld: checkpoint %s written; set "
                    "checkpoint { dir: \"%s\" resume: true } to continue\n",
                    (long long)(step + 1), saved->c_str(), checkpointDir.c_str());
        std::fflush(stdout);
        return Status::error(kInterrupted);
      }
    }
    if ((step + 1) % cfg.log().every() == 0 || last) {
      auto now = std::chrono::steady_clock::now();
      double seconds = std::chrono::duration<double>(now - start).count();
      std::printf("step %lld/%lld  loss %.8g", (long long)(step + 1),
                  (long long)cfg.steps(), sums.loss);
      for (size_t m = 0; m < metricNames.size(); ++m)
        std::printf("  %s %.6g", metricNames[m].c_str(), sums.metrics[m]);
      std::printf("  lr %.3e  grad-norm %.4g  %.0f samples/s\n", lr, norm,
                  seconds > 0 ? double(samplesSinceLog) / seconds : 0.0);
      std::fflush(stdout);
      start = now;
      samplesSinceLog = 0;
    }
    bool evalNow = evalRun && evalData && cfg.eval().every() > 0 &&
                   ((step + 1) % cfg.eval().every() == 0 || last);
    if (evalNow) {
      copyParameters(plan, buffers, *evalRun->plan, *evalRun->buffers);
      Expected<EvalResult> r =
          evaluate(*evalRun->plan, *evalRun->buffers, evalRun->fn, evalData,
                   uint64_t(cfg.eval().batches()), false);
      if (!r.ok())
        return r.status();
      std::printf("eval at step %lld: loss %.6f", (long long)(step + 1), r->loss);
      for (const auto &[name, value] : r->metrics)
        std::printf("  %s %.6f", name.c_str(), value);
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  return Status::success();
}

} // namespace sinter::rt
