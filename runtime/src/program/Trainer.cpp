//===- Trainer.cpp - The training loop of a program ---------------------===//

#include "program/Trainer.h"

#include "data/Prefetcher.h"
#include "observe/RunLog.h"
#include "observe/Trace.h"
#include "program/Checkpoint.h"
#include "program/StoredTensors.h"
#include "program/ReportWindow.h"
#include "program/RunDescription.h"
#include "program/StepValues.h"
#include "program/TrainStep.h"
#include "runtime/config/ConfigLoader.h"
#include "support/AtomicFile.h"
#include "support/Format.h"

#include <chrono>
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

Status checkCompiledTraining(const config::TrainConfig &cfg, const StepPlan &plan) {
  if (int64_t(plan.microBatch()) != cfg.batch().micro())
    return Status::error("batch.micro is " + std::to_string(cfg.batch().micro()) +
                         " but the program was compiled for micro-batches of " +
                         std::to_string(plan.microBatch()) + "; recompile with the new value");
  return checkCompiledOptimizer(cfg, plan);
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
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

/// One training run: what it keeps from step to step, and the parts of a
/// step the loop below calls in order.
class Training {
public:
  Training(const config::TrainConfig &cfg, Communicator &comm, StepRun run,
           StepRun *evalRun, std::shared_ptr<const BatchSource> evalData)
      : cfg(cfg), ck(cfg.checkpoint()), comm(comm), run(run), plan(*run.plan),
        buffers(*run.buffers), evalRun(evalRun), evalData(std::move(evalData)),
        outputs(plan),
        checkpointDir(ck.dir().empty() ? "checkpoints" : ck.dir()),
        checkpoints(ck.background()) {}

  /// Checks the config against the program, opens the logs, resumes and
  /// starts the data; false in `more` when the run has no step left.
  Status start(std::shared_ptr<const BatchSource> trainData, bool &more);
  Status loop();

private:
  Status resume();
  /// Step `step`'s micro-batches of this rank into `world`.
  Status takeMicroBatches(TrainStepWorld &world);
  /// A step interrupted at a micro-batch: dropped, the last complete one
  /// checkpointed.
  Status dropped(int64_t step, const Status &interrupted);
  StepReport reportOf(int64_t step, const StepValues &values,
                      const TrainStepWorld &world);
  /// The checkpoint of step `step` + 1 when due or asked for by `signal`;
  /// then the run stops (kInterrupted) if it was the signal's.
  Status checkpointIfDue(int64_t step, int signal, StepReport &report);
  Status removeStaleCheckpointFiles();
  Status evaluateIfDue(int64_t step);
  Status finish();

  const config::TrainConfig &cfg;
  const config::TrainConfig::Checkpoint &ck;
  Communicator &comm;
  StepRun run;
  const StepPlan &plan;
  BufferSet &buffers;
  StepRun *evalRun;
  std::shared_ptr<const BatchSource> evalData;
  StepOutputs outputs;
  std::string checkpointDir;
  CheckpointWriter checkpoints;
  int64_t microBatches = 0; ///< k, per rank and step
  std::optional<Sampler> sampler;
  std::optional<RunLog> log;
  std::unique_ptr<Trace> trace;
  std::unique_ptr<Prefetcher> batches;
  std::optional<ReportWindow> window;
  CommunicationTimes times;
  Clock::time_point trainingStart;
  int64_t updates = 0; ///< applied so far, over the whole run
  int64_t first = 0;   ///< the first step this run takes
  int64_t saved = -1;  ///< the step of checkpoint.dir's newest checkpoint, if ours
};

Status Training::start(std::shared_ptr<const BatchSource> trainData, bool &more) {
  SINTER_RT_RETURN_IF_ERROR(checkCompiledTraining(cfg, plan));
  uint64_t b = plan.microBatch();
  std::string error;
  microBatches = config::accumulationSteps(cfg, comm.size(), error);
  if (microBatches < 1)
    return Status::error(error);
  SamplerOptions order;
  order.numSamples = trainData->numSamples();
  order.globalBatch = uint64_t(cfg.batch().global());
  order.microBatch = b;
  order.seed = cfg.seed();
  order.shuffle = cfg.data().shuffle();
  order.dropLast = cfg.data().drop_last();
  order.worldSize = uint64_t(comm.size());
  Expected<Sampler> made = Sampler::create(order);
  if (!made.ok())
    return made.status().withPrefix("data.train: ");
  sampler.emplace(made.take());
  Expected<RunLog> opened = RunLog::open(cfg, comm.rank() == 0);
  if (!opened.ok())
    return opened.status();
  log.emplace(opened.take());
  if (!cfg.log().trace_file().empty()) {
    auto opened = Trace::open(cfg.log().trace_file(), comm.rank(), comm.size());
    if (!opened.ok())
      return opened.status();
    trace = opened.take();
  }
  SINTER_RT_RETURN_IF_ERROR(removeStaleCheckpointFiles());
  SINTER_RT_RETURN_IF_ERROR(resume());
  // Every rank starts from rank 0's parameters and states (DOMAIN.md 3).
  SINTER_RT_RETURN_IF_ERROR(broadcastParameters(comm, plan, buffers));
  more = first < cfg.steps();
  if (!more)
    return Status::success();
  PrefetcherOptions ahead;
  ahead.rank = uint64_t(comm.rank());
  ahead.start = sampler->positionOf(uint64_t(first));
  ahead.numSteps = uint64_t(cfg.steps() - first);
  auto prefetcher = Prefetcher::start(std::move(*sampler), trainData, ahead);
  if (!prefetcher.ok())
    return prefetcher.status();
  batches = prefetcher.take();
  log->message(describeParallelism(cfg, comm));
  log->message(describePlanMemory(plan, buffers.device()));
  // A snapshot pays only when training goes on after a checkpoint: the
  // last one, and one asked for by a signal, are written in the foreground.
  if (!ck.dir().empty() && ck.every() > 0 && ck.every() < cfg.steps()) {
    Expected<uint64_t> snapshot = checkpoints.reserve(plan, comm.rank(), buffers.device());
    if (!snapshot.ok())
      return snapshot.status();
    if (*snapshot)
      log->message("checkpoints: written in the background from a snapshot of " +
                   formatBytes(*snapshot) +
                   (buffers.device().hostVisible() ? " in host memory"
                                                   : " in pinned host memory") +
                   " (checkpoint.background)");
  }
  log->message(describeLearningRate(cfg) + "; " + std::to_string(comm.size()) +
               (comm.size() == 1 ? " rank, " : " ranks, ") + std::to_string(microBatches) +
               (microBatches == 1 ? " micro-batch of " : " micro-batches of ") +
               std::to_string(b) + " per rank and step");
  window.emplace(uint64_t(cfg.batch().global()), tokensPerSampleOf(cfg, plan),
                 comm.runsCollectives() ? &times : nullptr);
  trainingStart = Clock::now();
  return Status::success();
}

/// A checkpoint killed while it was written leaves its temporary file;
/// rank 0 removes those of dead processes before any rank writes, and says so.
Status Training::removeStaleCheckpointFiles() {
  if (comm.rank() != 0)
    return Status::success();
  Expected<std::vector<StaleTemporary>> removed = removeStaleTemporaries(checkpointDir);
  if (!removed.ok())
    return removed.status().withPrefix("checkpoint.dir: ");
  for (const StaleTemporary &file : *removed)
    log->message("removed " + checkpointDir + "/" + file.name + " (" + formatBytes(file.bytes) +
                 "), the temporary file of a checkpoint whose writer was killed");
  // Pieces of a sharded checkpoint never made whole: a later checkpoint of
  // the same step must not take them for this run's.
  for (const OrphanPiece &piece : removeOrphanPieces(checkpointDir))
    log->message("removed " + checkpointDir + "/" + piece.name + " (" +
                 formatBytes(piece.bytes) +
                 "), a piece of a checkpoint that was never completed");
  return Status::success();
}

/// The newest checkpoint of checkpoint.dir, when asked to resume.
Status Training::resume() {
  if (!ck.resume() || ck.dir().empty())
    return Status::success();
  std::string latest = latestCheckpoint(ck.dir());
  if (latest.empty())
    return Status::success();
  Expected<int64_t> step =
      loadCheckpoint(latest, cfg.seed(), plan, buffers, updates, uint64_t(comm.rank()));
  if (!step.ok())
    return step.status().withPrefix("resuming: ");
  first = saved = *step;
  log->message("resumed from " + latest + " at step " + std::to_string(first));
  return Status::success();
}

Status Training::loop() {
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
    SINTER_RT_RETURN_IF_ERROR(takeMicroBatches(world));
    auto dataEnd = Clock::now();
    window->addDataWait(seconds(dataBegin, dataEnd));
    world.update = updateScalars(cfg, step, updates + 1);
    Status ran = runTrainStep(run.fn, plan, buffers, world);
    if (!ran.ok() && ran.message() == kInterrupted)
      return dropped(step, ran);
    SINTER_RT_RETURN_IF_ERROR(ran);
    if (trace)
      trace->step(step + 1, dataBegin, dataEnd, events);
    Expected<StepValues> values = outputs.read(comm, buffers, step);
    if (!values.ok())
      return values.status();
    ++updates;
    int signal = agreeOnInterrupt(&comm);
    SINTER_RT_RETURN_IF_ERROR(outputs.moveStates(buffers));
    StepReport report = reportOf(step, *values, world);
    SINTER_RT_RETURN_IF_ERROR(checkpointIfDue(step, signal, report));
    SINTER_RT_RETURN_IF_ERROR(log->step(report));
    if (trace)
      SINTER_RT_RETURN_IF_ERROR(trace->flush());
    SINTER_RT_RETURN_IF_ERROR(evaluateIfDue(step));
  }
  return finish();
}

Status Training::takeMicroBatches(TrainStepWorld &world) {
  for (int64_t micro = 0; micro < microBatches; ++micro) {
    Expected<MicroBatch> batch = batches->next();
    if (!batch.ok())
      return batch.status();
    world.microBatches.push_back(std::move(batch->tensors));
  }
  return Status::success();
}

Status Training::dropped(int64_t step, const Status &interrupted) {
  // Nothing of the step was applied, so the buffers hold the last complete
  // step, which is what a resume continues from.
  std::string dropped =
      "interrupted in step " + std::to_string(step + 1) + ": the step was dropped; ";
  if (step == saved || step == 0) {
    log->message(dropped + (step == 0 ? "no step was complete, so nothing was saved"
                                      : "its checkpoint is the newest already"));
    return interrupted;
  }
  Expected<std::string> written =
      checkpoints.save(checkpointDir, ck.keep(), step, cfg.seed(), plan, buffers, updates,
                       &comm, /*inForeground=*/true);
  if (!written.ok())
    return written.status();
  SINTER_RT_RETURN_IF_ERROR(checkpoints.wait());
  log->message(dropped + "checkpoint " + *written + " of step " + std::to_string(step) +
               " written; set checkpoint { dir: \"" + checkpointDir +
               "\" resume: true } to continue");
  return interrupted;
}

StepReport Training::reportOf(int64_t step, const StepValues &values,
                              const TrainStepWorld &world) {
  StepReport report;
  report.step = step + 1;
  report.steps = cfg.steps();
  report.logged = (step + 1) % cfg.log().every() == 0 || step + 1 == cfg.steps();
  report.loss = values.loss;
  for (size_t m = 0; m < outputs.metricNames().size(); ++m)
    report.metrics.emplace_back(outputs.metricNames()[m], values.metrics[m]);
  report.lr = world.update[SINTER_HP_LR];
  report.gradNorm = values.gradNorm;
  window->fill(report);
  return report;
}

Status Training::checkpointIfDue(int64_t step, int signal, StepReport &report) {
  bool periodic = ck.every() > 0 && (step + 1) % ck.every() == 0;
  bool last = step + 1 == cfg.steps();
  if ((ck.dir().empty() || !(periodic || last)) && !signal)
    return Status::success();
  // Every rank takes part (each writes its shards' piece); rank 0 writes
  // the rest.
  auto began = Clock::now();
  // Training waits for the snapshot; the file is written beside it.
  Expected<std::string> written =
      checkpoints.save(checkpointDir, ck.keep(), step + 1, cfg.seed(), plan, buffers, updates,
                       &comm, /*inForeground=*/last || signal);
  if (!written.ok())
    return written.status();
  auto ended = Clock::now();
  if (trace)
    trace->span("checkpoint", began, ended);
  report.checkpointSeconds = seconds(began, ended);
  report.logged = true;
  saved = step + 1;
  if (!signal)
    return Status::success();
  SINTER_RT_RETURN_IF_ERROR(checkpoints.wait());
  SINTER_RT_RETURN_IF_ERROR(log->step(report));
  log->message("interrupted at step " + std::to_string(step + 1) + ": checkpoint " +
               *written + " written; set checkpoint { dir: \"" + checkpointDir +
               "\" resume: true } to continue");
  return Status::error(kInterrupted);
}

Status Training::evaluateIfDue(int64_t step) {
  if (!evalRun || !evalData || cfg.eval().every() <= 0 ||
      ((step + 1) % cfg.eval().every() != 0 && step + 1 != cfg.steps()))
    return Status::success();
  auto began = Clock::now();
  SINTER_RT_RETURN_IF_ERROR(copyParameters(plan, buffers, *evalRun->plan, *evalRun->buffers));
  Expected<EvalResult> r = evaluate(*evalRun->plan, *evalRun->buffers, evalRun->fn,
                                    evalData, uint64_t(cfg.eval().batches()), false, &comm);
  if (!r.ok())
    return r.status();
  if (trace)
    trace->span("eval", began, Clock::now());
  return log->eval({step + 1, r->loss, r->metrics});
}

Status Training::finish() {
  SINTER_RT_RETURN_IF_ERROR(checkpoints.wait());
  if (comm.runsCollectives() && times.steps > 0)
    log->message(describeCommunication(times, cfg.parallel().overlap(),
                                       seconds(trainingStart, Clock::now())));
  if (std::string activity = comm.activity(); !activity.empty())
    log->message(activity);
  if (std::string activity = buffers.device().activity(); !activity.empty())
    log->message(activity);
  if (trace)
    SINTER_RT_RETURN_IF_ERROR(trace->close());
  return Status::success();
}

} // namespace

Status train(const config::TrainConfig &cfg, Communicator &comm, StepRun run,
             std::shared_ptr<const BatchSource> trainData, StepRun *evalRun,
             std::shared_ptr<const BatchSource> evalData) {
  Training training(cfg, comm, run, evalRun, std::move(evalData));
  bool more = false;
  SINTER_RT_RETURN_IF_ERROR(training.start(std::move(trainData), more));
  return more ? training.loop() : Status::success();
}

} // namespace sinter::rt
