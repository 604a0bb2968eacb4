//===- TrainStep.cpp - Running a compiled train step --------------------===//

#include "program/TrainStep.h"

#include "core/Philox.h"
#include "program/Convert.h"
#include "program/Interrupt.h"
#include "runtime/contract/abi.h"

#include <algorithm>
#include <map>
#include <optional>
#include <memory>
#include <chrono>
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
  /// Started, each with its bucket and start time, in order.
  struct Bucket {
    Pending pending;
    int64_t bucket;
    std::chrono::steady_clock::time_point started;
  };
  std::vector<Bucket> buckets;
  /// Started and not yet waited for: each one's pending result and rows.
  struct Collective {
    Pending pending;
    const void *scratch = nullptr;
    const char *name = "";
    std::chrono::steady_clock::time_point started;
  };
  std::map<int64_t, Collective> collectives;
  std::vector<bool> started;
  /// For CommunicationTimes: gradient collectives started, when the first
  /// started, when the backward pass ended, and when the last was done.
  uint64_t gradientCollectives = 0;
  std::chrono::steady_clock::time_point firstStart, backwardEnd, lastDone;
  bool backwardEnded = false;
  /// The ranks' agreement on stopping, started at one micro-batch and read
  /// at the next: read at once, it would wait behind the collectives the
  /// previous micro-batch left in flight to overlap this one.
  std::unique_ptr<int64_t> stopSignal = std::make_unique<int64_t>(0);
  std::optional<Pending> agreeing;
  void startCollective() {
    if (gradientCollectives++ == 0)
      firstStart = std::chrono::steady_clock::now();
  }
  /// For the trace: a collective that finished, from when it ran on the
  /// communicator's thread (or from `started` until now, if not recorded).
  void traceCollective(const Pending &p, std::string name, int64_t bucket,
                       std::chrono::steady_clock::time_point started) {
    if (!world->events)
      return;
    StepEvents::Collective c{std::move(name), bucket, started,
                             std::chrono::steady_clock::now()};
    if (const CollectiveSpan *span = p.span()) {
      c.begin = span->began;
      c.end = span->ended;
    }
    world->events->collectives.push_back(std::move(c));
  }
};

/// Adds a step's gradient communication to `t`.
void countTimes(const ActiveStep &s, CommunicationTimes *t) {
  if (!t || !s.world->comm || !s.backwardEnded || !s.error.ok())
    return;
  ++t->steps;
  t->buckets += s.gradientCollectives;
  if (s.gradientCollectives == 0)
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
  if (s.collectives.count(id)) {
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
  // A failed step may have left collectives started (gradients_ready does
  // not wait for buckets once the step failed): they finish before their
  // buffers can be reused or freed. Those already waited for return at once.
  for (auto &[id, collective] : step.collectives)
    (void)collective.pending.wait();
  for (const ActiveStep::Bucket &b : step.buckets)
    (void)b.pending.wait();
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

static void allReduceNow(void *data, DType dtype, int64_t count) {
  ActiveStep &s = current();
  if (s.world->comm && s.error.ok())
    s.error = s.world->comm->allReduce(data, dtype, uint64_t(count), ReduceOp::Sum)
                  .wait();
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
  s.startCollective();
  s.started[b] = true;
  s.buckets.push_back({s.world->comm->allReduce(s.buffers->bucketData(b),
                                                s.plan->buckets[b].dtype,
                                                s.buffers->bucketElements(b),
                                                ReduceOp::Sum),
                       bucket, std::chrono::steady_clock::now()});
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
  s.error = s.world->comm->allGather(shard, rows, DType::F32, uint64_t(count)).wait();
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
  s.startCollective();
  s.collectives[id] = {s.world->comm->reduceScatter(rows, shard, DType::F32,
                                                    uint64_t(count), ReduceOp::Sum),
                       rows, "reduce-scatter", std::chrono::steady_clock::now()};
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
  s.collectives[id] = {s.world->comm->allGather(shard, rows, DType::F32, uint64_t(count)),
                       shard, "all-gather", std::chrono::steady_clock::now()};
}

void sinter_rt_collective_wait(int64_t id, const void *scratch) {
  ActiveStep &s = current();
  auto it = s.collectives.find(id);
  if (it == s.collectives.end())
    return; // never started: an earlier failure, or one rank alone
  Status st = it->second.pending.wait();
  if (st.ok() && scratch != it->second.scratch)
    st = Status::error("internal error: collective " + std::to_string(id) +
                       " waited for with other rows than it started with");
  s.traceCollective(it->second.pending, it->second.name, -1, it->second.started);
  s.collectives.erase(it);
  s.lastDone = std::chrono::steady_clock::now();
  if (!st.ok() && s.error.ok())
    s.error = st;
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
  for (const ActiveStep::Bucket &b : s.buckets) {
    Status st = b.pending.wait();
    if (!st.ok() && s.error.ok())
      s.error = st;
    s.traceCollective(b.pending, "all-reduce", b.bucket, b.started);
  }
  s.lastDone = std::chrono::steady_clock::now();
  if (s.world->events)
    s.world->events->summed = s.lastDone;
}

} // extern "C"
