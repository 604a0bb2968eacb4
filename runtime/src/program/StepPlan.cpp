//===- StepPlan.cpp - The buffers of a compiled step --------------------===//

#include "program/StepPlan.h"

#include "runtime/contract/sinter_plan.pb.h"
#include "support/Format.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace sinter::rt {

const char *bufferKindName(BufferKind kind) {
  switch (kind) {
  case BufferKind::Input: return "input";
  case BufferKind::Param: return "param";
  case BufferKind::State: return "state";
  case BufferKind::Loss: return "loss";
  case BufferKind::Metric: return "metric";
  case BufferKind::StateOut: return "state (new value)";
  case BufferKind::Output: return "output";
  case BufferKind::Workspace: return "workspace";
  case BufferKind::Gradient: return "gradient";
  case BufferKind::OptimizerState: return "optimizer state";
  case BufferKind::GradNorm: return "gradient norm";
  case BufferKind::NonFinite: return "non-finite flag";
  case BufferKind::GradientSlices: return "gradient slices";
  }
  return "buffer";
}

// The plan names element types by their numbers (runtime/contract/DType.h).
static_assert(int(plan::F64) == int(DType::F64) && int(plan::F32) == int(DType::F32) &&
                  int(plan::BF16) == int(DType::BF16) && int(plan::F16) == int(DType::F16) &&
                  int(plan::I64) == int(DType::I64) && int(plan::I32) == int(DType::I32) &&
                  int(plan::BOOL) == int(DType::Bool),
              "sinter_plan.proto's DType and runtime/contract/DType.h disagree");

static DType fromPlan(plan::DType t) { return DType(int(t)); }

Expected<StepPlan> StepPlan::parse(const char *bytes, int64_t size) {
  plan::Step step;
  if (!bytes || size < 0 || !step.ParseFromArray(bytes, int(size)))
    return Status::error("internal error: the program's embedded step plan is "
                         "corrupt; recompile it with sinterc");
  StepPlan result;
  result.model = step.model();
  result.phase = step.phase();
  result.optimizer = step.optimizer();
  result.worldSize = step.world_size() > 0 ? uint64_t(step.world_size()) : 0;
  result.compiledMicroBatch = step.micro_batch() > 0 ? uint64_t(step.micro_batch()) : 0;
  result.memory = plan::planMemory(step);
  result.device = step.device().empty() ? "cpu" : step.device();
  if (result.device != "cpu" && result.device != "cuda")
    return Status::error("internal error: the plan's device is '" +
                         result.device + "'; expected cpu or cuda");
  for (const plan::Buffer &b : step.buffers()) {
    BufferSpec spec;
    spec.name = b.name();
    spec.kind = static_cast<BufferKind>(b.kind());
    spec.slot = b.slot();
    spec.dtype = fromPlan(b.dtype());
    for (int64_t d : b.shape()) {
      if (d < 0)
        return Status::error("internal error: negative size in the plan of '" +
                             spec.name + "'");
      spec.shape.push_back(uint64_t(d));
    }
    for (int64_t d : b.global_shape()) {
      if (d < 0)
        return Status::error("internal error: negative size in the plan of '" +
                             spec.name + "'");
      spec.globalShape.push_back(uint64_t(d));
    }
    if (b.global_shape_size() > 0 &&
        (spec.shape.size() != 1 || step.world_size() < 1 ||
         !numElements(spec.globalShape) ||
         spec.shape[0] * uint64_t(step.world_size()) < *numElements(spec.globalShape)))
      return Status::error("internal error: the plan's shard of '" + spec.name +
                           "' does not cover its global shape over the ranks");
    spec.init = b.init();
    spec.initArgs.assign(b.init_args().begin(), b.init_args().end());
    spec.valueBound = b.value_bound() > 0 ? uint64_t(b.value_bound()) : 0;
    spec.valueBoundSource = b.value_bound_source();
    if (b.has_ignore_index())
      spec.ignoreIndex = b.ignore_index();
    std::optional<uint64_t> bytesNeeded =
        numBytes(spec.shape, dtypeSize(spec.dtype));
    if (!bytesNeeded)
      return Status::error("internal error: the size of '" + spec.name +
                           "' overflows");
    spec.byteSize = *bytesNeeded;
    result.buffers.push_back(std::move(spec));
  }
  for (const plan::Bucket &bucket : step.buckets()) {
    GradientBucket out;
    for (const std::string &name : bucket.gradients()) {
      const BufferSpec *g = result.find(name, BufferKind::Gradient);
      if (!g || (!out.gradients.empty() && g->dtype != out.dtype))
        return Status::error("internal error: the plan's gradient bucket "
                             "names '" + name + "', not a gradient of its "
                             "dtype; recompile the program with sinterc");
      out.dtype = g->dtype;
      out.gradients.push_back(size_t(g - result.buffers.data()));
    }
    result.buckets.push_back(std::move(out));
  }
  // The ranks sum gradients bucket by bucket: each gradient is in one.
  std::vector<int> inBuckets(result.buffers.size(), 0);
  for (const GradientBucket &bucket : result.buckets)
    for (size_t g : bucket.gradients)
      ++inBuckets[g];
  for (size_t i = 0; i < result.buffers.size(); ++i)
    if (result.buffers[i].kind == BufferKind::Gradient && inBuckets[i] != 1)
      return Status::error("internal error: the gradient of '" +
                           result.buffers[i].name + "' is in " +
                           std::to_string(inBuckets[i]) +
                           " gradient buckets of the plan, not one; recompile "
                           "the program with sinterc");
  // The data feeds micro-batches of the compiled size: the inputs lead with it.
  if (result.compiledMicroBatch > 0)
    for (const BufferSpec &b : result.buffers)
      if (b.kind == BufferKind::Input &&
          (b.shape.empty() || uint64_t(b.shape[0]) != result.compiledMicroBatch))
        return Status::error("internal error: the plan's micro-batch is " +
                             std::to_string(result.compiledMicroBatch) +
                             " but input '" + b.name +
                             "' does not lead with it; recompile the program "
                             "with sinterc");
  return result;
}

uint64_t StepPlan::microBatch() const {
  if (compiledMicroBatch > 0)
    return compiledMicroBatch;
  // Compiled without a config (B bound by -D): the inputs lead with it.
  for (const BufferSpec &b : buffers)
    if (b.kind == BufferKind::Input && !b.shape.empty())
      return b.shape[0];
  return 0;
}

const BufferSpec *StepPlan::find(const std::string &name, BufferKind kind) const {
  for (const BufferSpec &b : buffers)
    if (b.name == name && b.kind == kind)
      return &b;
  return nullptr;
}

bool StepPlan::sharded() const {
  for (const BufferSpec &b : buffers)
    if (!b.globalShape.empty() || b.kind == BufferKind::GradientSlices)
      return true;
  return false;
}

bool StepPlan::shardsParameters() const {
  for (const BufferSpec &b : buffers)
    if (b.kind == BufferKind::Param && !b.globalShape.empty())
      return true;
  return false;
}

void BufferSet::Free::operator()(void *p) const { std::free(p); }

namespace {

// Slots of a bucket and host copies are 64-byte aligned.
uint64_t aligned(uint64_t bytes) { return (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64; }

/// Refuses a plan whose buffers `bytes` (on `where`, for `what`) exceed
/// what it has free, before any is allocated: past the host's memory an
/// allocation succeeds and the process is killed when it touches it.
Status checkFits(uint64_t bytes, const Device &where, const std::string &what) {
  std::optional<FreeMemory> free = where.freeMemory();
  if (!free || bytes <= free->bytes)
    return Status::success();
  return Status::error(
      "the plan's " + what + " need " + formatMiB(bytes) + " on " + where.describe() +
      ", which has " + formatMiB(free->bytes) + " free (" + free->source +
      "), so the run cannot start; `sinterc --config CFG --report-memory` shows "
      "where the memory goes, and a program compiled with a smaller batch.micro, "
      "recompute { mode: FULL } or a sharded parallel.strategy needs less");
}

} // namespace

Expected<BufferSet> BufferSet::allocate(const StepPlan &plan, Device &device) {
  // What the loops below allocate: every buffer's 64-byte slots on the
  // device (a bucket's gradients among them), and host copies where the
  // device is not the host.
  uint64_t onDevice = 0, hostCopies = 0;
  for (const BufferSpec &b : plan.buffers) {
    onDevice += aligned(b.byteSize);
    if (!device.hostVisible() && b.kind != BufferKind::Workspace)
      hostCopies += aligned(b.byteSize);
  }
  SINTER_RT_RETURN_IF_ERROR(checkFits(onDevice, device, "buffers"));
  if (hostCopies)
    SINTER_RT_RETURN_IF_ERROR(checkFits(hostCopies, hostDevice(), "host copies of its buffers"));
  BufferSet set;
  set.dev = &device;
  size_t n = plan.buffers.size();
  set.devicePointers.assign(n, nullptr);
  set.hostPointers.assign(n, nullptr);
  for (const BufferSpec &b : plan.buffers) {
    set.kinds.push_back(b.kind);
    set.sizes.push_back(b.byteSize);
  }
  auto allocate = [&](uint64_t size, const std::string &what) -> Expected<void *> {
    Expected<void *> p = device.allocate(size);
    if (!p.ok())
      return p.status().withPrefix(what + ": ");
    set.deviceStorage.emplace_back(*p, Release{&device});
    set.onDevice += size;
    return *p;
  };
  for (const GradientBucket &bucket : plan.buckets) {
    uint64_t size = 0;
    for (size_t g : bucket.gradients)
      size += aligned(plan.buffers[g].byteSize);
    Expected<void *> base = allocate(size, "a gradient bucket of " +
                                               std::to_string(size) + " bytes");
    if (!base.ok())
      return base.status();
    uint64_t at = 0;
    for (size_t g : bucket.gradients) {
      set.devicePointers[g] = static_cast<char *>(*base) + at;
      at += aligned(plan.buffers[g].byteSize);
    }
    set.bucketStart.push_back(*base);
    set.bucketCount.push_back(size / dtypeSize(bucket.dtype));
  }
  for (size_t i = 0; i < n; ++i) {
    const BufferSpec &b = plan.buffers[i];
    if (!set.devicePointers[i]) {
      Expected<void *> p = allocate(aligned(b.byteSize), "'" + b.name + "'");
      if (!p.ok())
        return p.status();
      set.devicePointers[i] = *p;
    }
    if (device.hostVisible() || b.kind == BufferKind::Workspace) {
      set.hostPointers[i] = set.devicePointers[i];
      continue;
    }
    void *host = std::aligned_alloc(64, aligned(b.byteSize));
    if (!host)
      return Status::error("out of host memory for a copy of '" + b.name + "'");
    std::memset(host, 0, aligned(b.byteSize));
    set.hostStorage.emplace_back(host);
    set.hostCopies += aligned(b.byteSize);
    set.hostPointers[i] = host;
  }
  return set;
}

Status BufferSet::upload(size_t i) {
  return dev->upload(devicePointers[i], hostPointers[i], sizes[i]);
}

Status BufferSet::download(size_t i) {
  return dev->download(hostPointers[i], devicePointers[i], sizes[i]);
}

Status BufferSet::upload(std::initializer_list<BufferKind> wanted) {
  for (size_t i = 0; i < kinds.size(); ++i)
    if (std::find(wanted.begin(), wanted.end(), kinds[i]) != wanted.end())
      SINTER_RT_RETURN_IF_ERROR(upload(i));
  return Status::success();
}

Status BufferSet::download(std::initializer_list<BufferKind> wanted) {
  for (size_t i = 0; i < kinds.size(); ++i)
    if (std::find(wanted.begin(), wanted.end(), kinds[i]) != wanted.end())
      SINTER_RT_RETURN_IF_ERROR(download(i));
  return Status::success();
}

} // namespace sinter::rt
