//===- Trainer.cpp - The training loop of a program ---------------------===//

#include "program/Trainer.h"

#include "data/Prefetcher.h"
#include "observe/RunLog.h"
#include "observe/Trace.h"
#include "program/Checkpoint.h"
#include "program/Convert.h"
#include "program/ReportWindow.h"
#include "program/RunDescription.h"
#include "program/TrainStep.h"
#include "runtime/config/ConfigLoader.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

namespace sinter::rt {

Status copyParameters(const StepPlan &from, BufferSet &src, const StepPlan &to,
                      BufferSet &dst) {
  SINTER_RT_RETURN_IF_ERROR(src.download({BufferKind::Param, BufferKind::State}));
  for (size_t i = 0; i < to.buffers.size(); ++i) {
    const BufferSpec &b = to.buffers[i];
    if (b.kind != BufferKind::Param && b.kind != BufferKind::State)
      continue;
    if (const BufferSpec *s = from.find(b.name, b.kind))
      std::memcpy(dst.data(i), src.data(size_t(s - from.buffers.data())),
                  b.byteSize);
  }
  return dst.upload({BufferKind::Param, BufferKind::State});
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
  double gradNorm = 0;
  double nonFinite = 0; ///< summed over ranks: how many saw one
};

/// What was not finite, for the message: the first gradient with a
/// non-finite element, or under ZERO2 (which keeps each rank's slices of a
/// bucket) the first such bucket of this rank; else a rank's loss.
std::string whatWasNotFinite(const StepPlan &plan, BufferSet &buffers) {
  bool sliced = false;
  if (buffers.download({BufferKind::Gradient, BufferKind::GradientSlices}).ok())
    for (size_t i = 0; i < plan.buffers.size(); ++i) {
      const BufferSpec &b = plan.buffers[i];
      if (b.kind != BufferKind::Gradient && b.kind != BufferKind::GradientSlices)
        continue;
      sliced |= b.kind == BufferKind::GradientSlices;
      uint64_t n = b.byteSize / dtypeSize(b.dtype);
      std::vector<double> v = asDoubles(buffers.data(i), b.dtype, n);
      for (double x : v)
        if (!std::isfinite(x))
          return b.kind == BufferKind::Gradient
                     ? "the gradient of '" + b.name + "'"
                     : "a gradient of " + b.name + " (this rank's slice of it)";
    }
  return sliced ? "a rank's loss or its slice of a gradient" : "a rank's loss";
}

/// The tokens of one sample when data.train is a token stream (its `idx`
/// input's length), else 0.
uint64_t tokensPerSampleOf(const config::TrainConfig &cfg, const StepPlan &plan) {
  const BufferSpec *idx = plan.find("idx", BufferKind::Input);
  if (!cfg.data().train().has_tokens() || !idx || idx->shape.size() < 2)
    return 0;
  uint64_t n = 1;
  for (size_t d = 1; d < idx->shape.size(); ++d)
    n *= idx->shape[d];
  return n;
}

/// The index of the first buffer of `kind`, if the plan has one.
std::optional<size_t> bufferOf(const StepPlan &plan, BufferKind kind) {
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].kind == kind)
      return i;
  return std::nullopt;
}

/// Rank 0's params and states on every rank.
Status broadcastParameters(Communicator &comm, const StepPlan &plan,
                           BufferSet &buffers) {
  if (comm.size() == 1)
    return Status::success();
  std::vector<Pending> started;
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &b = plan.buffers[i];
    // A shard is each rank's own, and already initialised as its slice.
    if ((b.kind == BufferKind::Param || b.kind == BufferKind::State) &&
        b.globalShape.empty())
      started.push_back(comm.broadcast(buffers.data(i), b.dtype,
                                       b.byteSize / dtypeSize(b.dtype), 0));
  }
  SINTER_RT_RETURN_IF_ERROR(waitAll(started));
  return buffers.upload({BufferKind::Param, BufferKind::State});
}

/// The step's values over all ranks: the loss is the sum of the ranks'
/// shares, metrics and new floating-point states the mean of the ranks'
/// (equal-sized) means, the non-finite flags a count.
Status reduceStepValues(Communicator &comm, const StepPlan &plan,
                        BufferSet &buffers, const std::vector<size_t> &stateOut,
                        StepValues &step) {
  if (comm.size() == 1)
    return Status::success();
  double &loss = step.loss;
  std::vector<double> &metrics = step.metrics;
  std::vector<double> values = {loss, step.nonFinite};
  values.insert(values.end(), metrics.begin(), metrics.end());
  std::vector<Pending> started = {
      comm.allReduce(values.data(), DType::F64, values.size(), ReduceOp::Sum)};
  std::vector<std::vector<double>> states;
  for (size_t i : stateOut) {
    const BufferSpec &b = plan.buffers[i];
    if (!isFloatingPoint(b.dtype))
      continue; // integer states move alike on every rank
    states.push_back(asDoubles(buffers.data(i), b.dtype,
                               b.byteSize / dtypeSize(b.dtype)));
    started.push_back(comm.allReduce(states.back().data(), DType::F64,
                                     states.back().size(), ReduceOp::Sum));
  }
  SINTER_RT_RETURN_IF_ERROR(waitAll(started)); // before `values` can go
  double ranks = double(comm.size());
  loss = values[0];
  step.nonFinite = values[1];
  for (size_t m = 0; m < metrics.size(); ++m)
    metrics[m] = values[m + 2] / ranks;
  size_t s = 0;
  for (size_t i : stateOut) {
    const BufferSpec &b = plan.buffers[i];
    if (!isFloatingPoint(b.dtype))
      continue;
    for (double &x : states[s])
      x /= ranks;
    SINTER_RT_RETURN_IF_ERROR(convertElements(states[s].data(), DType::F64,
                                              buffers.data(i), b.dtype,
                                              states[s].size()));
    ++s;
  }
  return Status::success();
}

} // namespace

Status train(const config::TrainConfig &cfg, Communicator &comm, StepRun run,
             std::shared_ptr<const BatchSource> trainData, StepRun *evalRun,
             std::shared_ptr<const BatchSource> evalData) {
  const StepPlan &plan = *run.plan;
  const bool lead = comm.rank() == 0; // logs and writes checkpoints
  BufferSet &buffers = *run.buffers;
  uint64_t b = plan.microBatch();
  if (int64_t(b) != cfg.batch().micro())
    return Status::error("batch.micro is " + std::to_string(cfg.batch().micro()) +
                         " but the program was compiled for micro-batches of " +
                         std::to_string(b) + "; recompile with the new value");
  std::string error;
  int64_t k = config::accumulationSteps(cfg, comm.size(), error);
  if (k < 1)
    return Status::error(error);

  SamplerOptions order;
  order.numSamples = trainData->numSamples();
  order.globalBatch = uint64_t(cfg.batch().global());
  order.microBatch = b;
  order.seed = cfg.seed();
  order.shuffle = cfg.data().shuffle();
  order.dropLast = cfg.data().drop_last();
  order.worldSize = uint64_t(comm.size());
  Expected<Sampler> sampler = Sampler::create(order);
  if (!sampler.ok())
    return sampler.status().withPrefix("data.train: ");
  SINTER_RT_RETURN_IF_ERROR(checkCompiledOptimizer(cfg, plan));
  Expected<RunLog> opened = RunLog::open(cfg, lead);
  if (!opened.ok())
    return opened.status();
  RunLog log = opened.take();
  std::unique_ptr<Trace> trace;
  if (!cfg.log().trace_file().empty()) {
    auto made = Trace::open(cfg.log().trace_file(), comm.rank(), comm.size());
    if (!made.ok())
      return made.status();
    trace = made.take();
  }
  int64_t updates = 0; // applied so far, over the whole run

  // Resume: the newest checkpoint of checkpoint.dir, when asked to.
  const auto &ck = cfg.checkpoint();
  int64_t first = 0;
  int64_t saved = -1; // the step of checkpoint.dir's newest checkpoint, if ours
  if (ck.resume() && !ck.dir().empty()) {
    std::string latest = latestCheckpoint(ck.dir());
    if (!latest.empty()) {
      Expected<int64_t> step =
          loadCheckpoint(latest, cfg.seed(), plan, buffers, updates,
                         uint64_t(comm.rank()));
      if (!step.ok())
        return step.status().withPrefix("resuming: ");
      first = saved = *step;
      log.message("resumed from " + latest + " at step " + std::to_string(first));
    }
  }
  // Every rank starts from rank 0's parameters and states (DOMAIN.md 3).
  SINTER_RT_RETURN_IF_ERROR(broadcastParameters(comm, plan, buffers));
  if (first >= cfg.steps())
    return Status::success();

  PrefetcherOptions ahead;
  ahead.rank = uint64_t(comm.rank());
  ahead.start = sampler->positionOf(uint64_t(first));
  ahead.numSteps = uint64_t(cfg.steps() - first);
  auto batches = Prefetcher::start(sampler.take(), trainData, ahead);
  if (!batches.ok())
    return batches.status();
  std::vector<size_t> metricBuffers, stateOut;
  std::vector<std::string> metricNames;
  size_t lossBuffer = 0;
  std::optional<size_t> gradNormBuffer = bufferOf(plan, BufferKind::GradNorm);
  std::optional<size_t> nonFiniteBuffer = bufferOf(plan, BufferKind::NonFinite);
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

  log.message(describeParallelism(cfg, comm));
  log.message(describePlanMemory(plan));
  log.message(describeLearningRate(cfg) + "; " + std::to_string(comm.size()) +
              (comm.size() == 1 ? " rank, " : " ranks, ") + std::to_string(k) +
              " micro-batches of " + std::to_string(b) + " per rank and step");
  auto trainingStart = std::chrono::steady_clock::now();
  CommunicationTimes times;
  ReportWindow window(uint64_t(cfg.batch().global()), tokensPerSampleOf(cfg, plan),
                      comm.runsCollectives() ? &times : nullptr);
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  std::string checkpointDir = ck.dir().empty() ? "checkpoints" : ck.dir();
  for (int64_t step = first; step < cfg.steps(); ++step) {
    // The step loops over its k micro-batches itself; it sums the loss and
    // gradients (each micro-batch's loss is its exact share of the global
    // batch's) and averages metrics and new states.
    TrainStepWorld world;
    world.globalBatch = uint64_t(cfg.batch().global());
    world.seed = cfg.seed();
    world.step = uint64_t(step);
    world.rank = uint64_t(comm.rank());
    world.comm = comm.runsCollectives() ? &comm : nullptr;
    world.times = &times;
    StepEvents events;
    world.events = trace ? &events : nullptr;
    auto dataBegin = Clock::now();
    for (int64_t micro = 0; micro < k; ++micro) {
      Expected<MicroBatch> batch = (*batches)->next();
      if (!batch.ok())
        return batch.status();
      world.microBatches.push_back(std::move(batch->tensors));
    }
    auto dataEnd = Clock::now();
    window.addDataWait(seconds(dataBegin, dataEnd));
    world.update = updateScalars(cfg, step, updates + 1);
    Status ran = runTrainStep(run.fn, plan, buffers, world);
    if (!ran.ok() && ran.message() == kInterrupted) {
      // Dropped at a micro-batch: nothing of it was applied, so the buffers
      // hold the last complete step, which is what a resume continues from.
      std::string dropped =
          "interrupted in step " + std::to_string(step + 1) + ": the step was dropped; ";
      if (step == saved || step == 0) {
        log.message(dropped + (step == 0 ? "no step was complete, so nothing was saved"
                                         : "its checkpoint is the newest already"));
        return ran;
      }
      Expected<std::string> written =
          saveCheckpoint(checkpointDir, ck.keep(), step, cfg.seed(), plan,
                         buffers, updates, &comm);
      if (!written.ok())
        return written.status();
      log.message(dropped + "checkpoint " + *written + " of step " +
                  std::to_string(step) + " written; set checkpoint { dir: \"" +
                  checkpointDir + "\" resume: true } to continue");
      return ran;
    }
    SINTER_RT_RETURN_IF_ERROR(ran);
    if (trace)
      trace->step(step + 1, dataBegin, dataEnd, events);
    SINTER_RT_RETURN_IF_ERROR(buffers.download(
        {BufferKind::Loss, BufferKind::Metric, BufferKind::GradNorm,
         BufferKind::NonFinite, BufferKind::StateOut}));
    StepValues sums;
    sums.loss = asDoubles(buffers.data(lossBuffer),
                          plan.buffers[lossBuffer].dtype, 1)[0];
    for (size_t m : metricBuffers)
      sums.metrics.push_back(
          asDoubles(buffers.data(m), plan.buffers[m].dtype, 1)[0]);
    if (gradNormBuffer)
      sums.gradNorm = asDoubles(buffers.data(*gradNormBuffer), DType::F64, 1)[0];
    if (nonFiniteBuffer)
      sums.nonFinite = asDoubles(buffers.data(*nonFiniteBuffer),
                                 plan.buffers[*nonFiniteBuffer].dtype, 1)[0];
    // The global loss, metrics, new states and non-finite flags, and
    // whether any rank was asked to stop: every rank decides alike.
    SINTER_RT_RETURN_IF_ERROR(
        reduceStepValues(comm, plan, buffers, stateOut, sums));
    // A step that saw a non-finite loss or gradient changed no parameter;
    // the run stops with its last checkpoint as it was.
    if (!std::isfinite(sums.loss))
      return Status::error("step " + std::to_string(step + 1) + ": the loss is " +
                           std::to_string(sums.loss) +
                           "; lower the learning rate or check the data");
    if (sums.nonFinite > 0) {
      return Status::error(
          "step " + std::to_string(step + 1) + ": " + whatWasNotFinite(plan, buffers) +
          " is not finite; lower the learning rate or clip gradients "
          "(clip_grad_norm)");
    }
    ++updates;
    int signal = agreeOnInterrupt(&comm);
    // States move once per step, to the mean the step computed (DOMAIN.md 4).
    for (size_t i : stateOut) {
      const BufferSpec &spec = plan.buffers[i];
      if (const BufferSpec *state = plan.find(spec.name, BufferKind::State)) {
        size_t s = size_t(state - plan.buffers.data());
        std::memcpy(buffers.data(s), buffers.data(i), spec.byteSize);
        SINTER_RT_RETURN_IF_ERROR(buffers.upload(s));
      }
    }
    bool last = step + 1 == cfg.steps();
    StepReport report;
    report.step = step + 1;
    report.steps = cfg.steps();
    report.logged = (step + 1) % cfg.log().every() == 0 || last;
    report.loss = sums.loss;
    for (size_t m = 0; m < metricNames.size(); ++m)
      report.metrics.emplace_back(metricNames[m], sums.metrics[m]);
    report.lr = world.update[SINTER_HP_LR];
    report.gradNorm = sums.gradNorm;
    window.fill(report);

    bool periodic = ck.every() > 0 && (step + 1) % ck.every() == 0;
    if ((!ck.dir().empty() && (periodic || last)) || signal) {
      // Every rank takes part (each writes its shards' piece); rank 0 writes
      // the rest.
      auto began = Clock::now();
      Expected<std::string> wrote =
          saveCheckpoint(checkpointDir, ck.keep(), step + 1, cfg.seed(), plan,
                         buffers, updates, &comm);
      if (!wrote.ok())
        return wrote.status();
      if (trace)
        trace->span("checkpoint", began, Clock::now());
      std::string written = *wrote;
      saved = step + 1;
      if (signal) {
        SINTER_RT_RETURN_IF_ERROR(log.step(report));
        log.message("interrupted at step " + std::to_string(step + 1) +
                    ": checkpoint " + written + " written; set checkpoint { dir: \"" +
                    checkpointDir + "\" resume: true } to continue");
        return Status::error(kInterrupted);
      }
    }
    SINTER_RT_RETURN_IF_ERROR(log.step(report));
    if (trace)
      SINTER_RT_RETURN_IF_ERROR(trace->flush());
    bool evalNow = evalRun && evalData && cfg.eval().every() > 0 &&
                   ((step + 1) % cfg.eval().every() == 0 || last);
    if (evalNow) {
      auto began = Clock::now();
      SINTER_RT_RETURN_IF_ERROR(
          copyParameters(plan, buffers, *evalRun->plan, *evalRun->buffers));
      Expected<EvalResult> r =
          evaluate(*evalRun->plan, *evalRun->buffers, evalRun->fn, evalData,
                   uint64_t(cfg.eval().batches()), false, &comm);
      if (!r.ok())
        return r.status();
      if (trace)
        trace->span("eval", began, Clock::now());
      SINTER_RT_RETURN_IF_ERROR(log.eval({step + 1, r->loss, r->metrics}));
    }
  }
  if (comm.runsCollectives() && times.steps > 0)
    log.message(describeCommunication(times, cfg.parallel().overlap(),
                                      seconds(trainingStart, Clock::now())));
  if (std::string activity = comm.activity(); !activity.empty())
    log.message(activity);
  if (std::string activity = buffers.device().activity(); !activity.empty())
    log.message(activity);
  if (trace)
    SINTER_RT_RETURN_IF_ERROR(trace->close());
  return Status::success();
}

} // namespace sinter::rt
