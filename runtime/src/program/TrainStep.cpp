//===- TrainStep.cpp - Running a compiled train step --------------------===//

#include "program/TrainStep.h"

#include "core/Philox.h"
#include "program/Convert.h"
#include "program/Interrupt.h"
#include "runtime/contract/abi.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <cstdio>
#include <cstdlib>

namespace sinter::rt {
namespace {

/// The step being run on this thread, while sinter_step_train runs.
struct ActiveStep {
  const StepPlan *plan = nullptr;
  BufferSet *buffers = nullptr;
  const TrainStepWorld *world = nullptr;
  Status error = Status::success(); ///< the first failure inside the step
  /// A collective the step started: what it is, and its bucket (-1 for a
  /// sharded strategy's collective).
  struct Collective {
    Pending pending;
    const char *name = "";
    int64_t bucket = -1;
    const void *scratch = nullptr; ///< the rows a sharded one started with
    std::chrono::steady_clock::time_point started;
    bool gradientSum = false; ///< a bucket's all-reduce or a reduce-scatter
  };
  /// The buckets' all-reduces, in the order they started.
  std::vector<Collective> buckets;
  std::vector<bool> started; ///< per bucket of the plan
  /// Sharded collectives started and not yet waited for, by id.
  std::map<int64_t, Collective> inFlight;
  /// Collectives the step's work waits for, which the host has not: the
  /// step's end does, for their failures and times.
  std::vector<Collective> waitedInQueue;
  /// For CommunicationTimes: the collectives of each kind, when the first
  /// gradient sum started, and when the backward pass ended.
  uint64_t allReduces = 0, reduceScatters = 0, allGathers = 0, gradientSums = 0;
  std::chrono::steady_clock::time_point firstStart, backwardEnd, lastDone;
  bool backwardEnded = false;
  /// The ranks' agreement on stopping, started at one micro-batch and read
  /// at the next: read at once, it would wait behind the collectives the
  /// previous micro-batch left in flight to overlap this one.
  std::unique_ptr<int64_t> stopSignal = std::make_unique<int64_t>(0);
  std::optional<Pending> agreeing;

  void fail(const Status &st) {
    if (!st.ok() && error.ok())
      error = st;
  }
  /// Notes a collective just started.
  void count(const Collective &c) {
    if (c.gradientSum && gradientSums++ == 0)
      firstStart = c.started;
  }
  /// Makes the step's later work wait for `c`, which the host waits for at
  /// the step's end.
  void awaitInQueue(Collective c) {
    fail(c.pending.waitInQueue());
    waitedInQueue.push_back(std::move(c));
  }
  /// The host waits for `c`: its failure, its time on the trace, and when
  /// the gradient sums were done.
  void settle(const Collective &c) {
    fail(c.pending.wait());
    auto now = std::chrono::steady_clock::now();
    const CollectiveSpan *span = c.pending.span();
    if (c.gradientSum)
      lastDone = std::max(lastDone, span ? span->ended : now);
    if (!world->events)
      return;
    StepEvents::Collective e{c.name, c.bucket, c.started, now};
    if (span) {
      e.begin = span->began;
      e.end = span->ended;
    }
    world->events->collectives.push_back(std::move(e));
  }
};

/// Adds a step's communication to `t`.
void countTimes(const ActiveStep &s, CommunicationTimes *t) {
  if (!t || !s.world->comm || !s.backwardEnded || !s.error.ok())
    return;
  ++t->steps;
  t->allReduces += s.allReduces;
  t->reduceScatters += s.reduceScatters;
  t->allGathers += s.allGathers;
  if (s.gradientSums == 0)
    return;
  auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
  // Without overlap the sums start just before the backward pass is marked
  // ended (at most microseconds, never negative).
  t->overlappedSeconds += std::max(0.0, seconds(s.backwardEnd - s.firstStart));
  t->waitedSeconds += seconds(std::max(s.lastDone, s.backwardEnd) - s.backwardEnd);
}

thread_local ActiveStep *active = nullptr;

ActiveStep &current() {
  if (!active) {
    std::fprintf(stderr, "internal error: a train step called the runtime "
                         "outside runTrainStep\n");
    std::abort();
  }
  return *active;
}

/// Whether collective `id` may start: the step has not failed, and `id` is
/// not in flight already (which fails the step).
bool mayStart(ActiveStep &s, int64_t id) {
  if (!s.error.ok())
    return false;
  if (s.inFlight.count(id)) {
    s.error = Status::error("internal error: the step started collective " +
                            std::to_string(id) + " twice");
    return false;
  }
  return true;
}

void loadInput(ActiveStep &s, void *buffer, int64_t micro) {
  if (!s.error.ok())
    return;
  const StepPlan &plan = *s.plan;
  if (micro < 0 || uint64_t(micro) >= s.world->microBatches.size()) {
    s.error = Status::error("internal error: the step asked for micro-batch " +
                            std::to_string(micro) + " of " +
                            std::to_string(s.world->microBatches.size()));
    return;
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const BufferSpec &spec = plan.buffers[i];
    if (spec.kind != BufferKind::Input || s.buffers->deviceData(i) != buffer)
      continue;
    for (const HostTensor &t : s.world->microBatches[size_t(micro)]) {
      if (t.name != spec.name)
        continue;
      Status st = convertElements(t.bytes.data(), t.dtype, s.buffers->data(i),
                                  spec.dtype, spec.byteSize / dtypeSize(spec.dtype));
      if (st.ok())
        st = s.buffers->upload(i);
      if (!st.ok())
        s.error = st.withPrefix("input '" + spec.name + "': ");
      return;
    }
    s.error = Status::error("no data feeds the input '" + spec.name + "'");
    return;
  }
  s.error = Status::error("internal error: the step loaded a buffer that is "
                          "not one of its inputs");
}

} // namespace

int64_t microBatchRandomKey(uint64_t seed, uint64_t step, uint64_t micro,
                            uint64_t rank) {
  PhiloxCounter c = philox4x32x10(
      {uint32_t(step), uint32_t(step >> 32), uint32_t(micro), uint32_t(rank)},
      {uint32_t(seed), uint32_t(seed >> 32)});
  return int64_t(uint64_t(c[0]) | uint64_t(c[1]) << 32);
}

Status runTrainStep(StepFn fn, const StepPlan &plan, BufferSet &buffers,
                    const TrainStepWorld &world) {
  if (world.microBatches.empty())
    return Status::error("internal error: a train step without micro-batches");
  return runStep(fn, plan, buffers, world);
}

Status runStep(StepFn fn, const StepPlan &plan, BufferSet &buffers,
               const TrainStepWorld &world) {
  ActiveStep step;
  step.plan = &plan;
  step.buffers = &buffers;
  step.world = &world;
  step.started.assign(plan.buckets.size(), false);
  active = &step;
  fn(buffers.table());
  active = nullptr;
  if (step.agreeing)
    (void)step.agreeing->wait(); // before its integer goes
  if (world.events)
    world.events->end = std::chrono::steady_clock::now();
  // Every collective the step started, waited for by the host: a device's
  // wait in queue returns before the collective is done, a failed step may
  // have left some in flight, and none may outlive the buffers it writes.
  for (auto &[id, collective] : step.inFlight)
    step.settle(collective);
  for (const ActiveStep::Collective &c : step.waitedInQueue)
    step.settle(c);
  for (const ActiveStep::Collective &b : step.buckets)
    step.settle(b);
  if (world.events && step.gradientSums > 0)
    world.events->summed = std::max(step.lastDone, world.events->backwardEnd);
  countTimes(step, world.times);
  // A device's errors (a failed launch) surface when its work is done.
  Status done = buffers.device().synchronize();
  return step.error.ok() ? done : step.error;
}

} // namespace sinter::rt

using namespace sinter::rt;

extern "C" {

int64_t sinter_rt_micro_batch_count(void) {
  return int64_t(current().world->microBatches.size());
}

int64_t sinter_rt_global_batch(void) {
  return int64_t(current().world->globalBatch);
}

int64_t sinter_rt_random_key(int64_t micro_batch) {
  const TrainStepWorld &w = *current().world;
  return microBatchRandomKey(w.seed, w.step, uint64_t(micro_batch), w.rank);
}

// Every rank agrees at each micro-batch on what was asked by the one before,
// so all of them drop the same step at the same point and their collectives
// still match.
int64_t sinter_rt_micro_batch_begin(int64_t micro_batch) {
  ActiveStep &s = current();
  if (!s.error.ok())
    return 0; // the step fails anyway
  if (s.world->events)
    s.world->events->microBatches.emplace_back(micro_batch,
                                               std::chrono::steady_clock::now());
  int signal = s.world->comm ? 0 : interruptSignal();
  if (s.agreeing) {
    Status agreed = s.agreeing->wait();
    s.agreeing.reset();
    if (!agreed.ok()) {
      s.error = agreed;
      return 0;
    }
    signal = int(*s.stopSignal);
  }
  if (signal) {
    noteAgreedInterrupt(signal);
    s.error = Status::error(kInterrupted);
    return 0;
  }
  if (s.world->comm) {
    *s.stopSignal = interruptSignal();
    s.agreeing = s.world->comm->allReduce(s.stopSignal.get(), DType::I64, 1, ReduceOp::Max);
  }
  return 1;
}

void sinter_rt_load_input(void *buffer, int64_t micro_batch) {
  loadInput(current(), buffer, micro_batch);
}

int64_t sinter_rt_sum_over_ranks(int64_t value) {
  ActiveStep &s = current();
  if (s.world->comm && s.error.ok())
    s.error = s.world->comm->allReduce(&value, DType::I64, 1, ReduceOp::Sum).wait();
  return value;
}

// Each loss share is already divided by the global batch's count, so the
// step's gradient is the sum over ranks (DOMAIN.md 2, 3).

/// One rank's gather or scatter: its own row, copied by the step's device
/// (device memory on CUDA), in order with the step's work.
static Status ownRow(ActiveStep &s, float *to, const float *from, int64_t count) {
  return s.buffers->device().copy(to, from, uint64_t(count) * sizeof(float));
}

/// A collective the step's later work reads at once: the step waits for it
/// in queue.
static void allReduceNow(void *data, DType dtype, int64_t count) {
  ActiveStep &s = current();
  if (!s.world->comm || !s.error.ok())
    return;
  ++s.allReduces;
  s.awaitInQueue({s.world->comm->allReduce(data, dtype, uint64_t(count), ReduceOp::Sum),
                  "all-reduce", -1, nullptr, std::chrono::steady_clock::now()});
}

void sinter_rt_all_reduce_sum_f32(float *data, int64_t count) {
  allReduceNow(data, DType::F32, count);
}

void sinter_rt_all_reduce_sum_f64(double *data, int64_t count) {
  allReduceNow(data, DType::F64, count);
}

void sinter_rt_bucket_ready(int64_t bucket) {
  ActiveStep &s = current();
  if (!s.world->comm || !s.error.ok())
    return;
  size_t b = size_t(bucket);
  if (bucket < 0 || b >= s.plan->buckets.size() || s.started[b]) {
    s.error = Status::error("internal error: the step started bucket " +
                            std::to_string(bucket) + " twice or out of range");
    return;
  }
  s.started[b] = true;
  ++s.allReduces;
  s.buckets.push_back({s.world->comm->allReduce(s.buffers->bucketData(b),
                                                s.plan->buckets[b].dtype,
                                                s.buffers->bucketElements(b), ReduceOp::Sum),
                       "all-reduce", bucket, nullptr, std::chrono::steady_clock::now(),
                       /*gradientSum=*/true});
  s.count(s.buckets.back());
}

int64_t sinter_rt_rank(void) { return int64_t(current().world->rank); }

void sinter_rt_all_gather_f32(const float *shard, float *rows, int64_t count) {
  ActiveStep &s = current();
  if (!s.error.ok())
    return;
  if (!s.world->comm) {
    s.error = ownRow(s, rows, shard, count);
    return;
  }
  ++s.allGathers;
  s.awaitInQueue({s.world->comm->allGather(shard, rows, DType::F32, uint64_t(count)),
                  "all-gather", -1, nullptr, std::chrono::steady_clock::now()});
}

void sinter_rt_reduce_scatter_start_f32(int64_t id, float *rows, float *shard,
                                        int64_t count) {
  ActiveStep &s = current();
  if (!mayStart(s, id))
    return;
  if (!s.world->comm) {
    s.error = ownRow(s, shard, rows, count);
    return;
  }
  ++s.reduceScatters;
  ActiveStep::Collective &c = s.inFlight[id];
  c = {s.world->comm->reduceScatter(rows, shard, DType::F32, uint64_t(count),
                                    ReduceOp::Sum),
       "reduce-scatter", -1, rows, std::chrono::steady_clock::now(), /*gradientSum=*/true};
  s.count(c);
}

void sinter_rt_all_gather_start_f32(int64_t id, const float *shard, float *rows,
                                    int64_t count) {
  ActiveStep &s = current();
  if (!mayStart(s, id))
    return;
  if (!s.world->comm) {
    s.error = ownRow(s, rows, shard, count);
    return;
  }
  ++s.allGathers;
  s.inFlight[id] = {s.world->comm->allGather(shard, rows, DType::F32, uint64_t(count)),
                    "all-gather", -1, shard, std::chrono::steady_clock::now()};
}

void sinter_rt_collective_wait(int64_t id, const void *scratch) {
  ActiveStep &s = current();
  auto it = s.inFlight.find(id);
  if (it == s.inFlight.end())
    return; // never started: an earlier failure, or one rank alone
  ActiveStep::Collective c = std::move(it->second);
  s.inFlight.erase(it);
  if (scratch != c.scratch)
    s.fail(Status::error("internal error: collective " + std::to_string(id) +
                         " waited for with other rows than it started with"));
  s.awaitInQueue(std::move(c));
}

double sinter_rt_hyperparameter(int64_t which) {
  ActiveStep &s = current();
  if (which < 0 || which >= SINTER_HP_COUNT) {
    if (s.error.ok())
      s.error = Status::error("internal error: the step asked for "
                              "hyperparameter " + std::to_string(which));
    return 0;
  }
  // A step whose communication failed leaves its parameters alone.
  if (which == SINTER_HP_APPLY && !s.error.ok())
    return 0;
  return s.world->update[size_t(which)];
}

void sinter_rt_gradients_ready(void) {
  ActiveStep &s = current();
  auto now = std::chrono::steady_clock::now();
  if (s.world->events)
    s.world->events->backwardEnd = s.world->events->summed = now;
  if (!s.world->comm || !s.error.ok())
    return;
  s.backwardEnd = now;
  s.backwardEnded = true;
  for (size_t b = 0; b < s.plan->buckets.size(); ++b)
    if (!s.started[b])
      sinter_rt_bucket_ready(int64_t(b));
  // The update reads the sums: it waits for them in the step's queue (on a
  // GPU, without the host waiting); the step's end waits on the host.
  for (const ActiveStep::Collective &b : s.buckets)
    s.fail(b.pending.waitInQueue());
}

} // extern "C"
