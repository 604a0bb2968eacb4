//===- StepPlan.cpp - The buffers of a compiled step --------------------===//

#include "program/StepPlan.h"

#include "runtime/contract/sinter_plan.pb.h"

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
  }
  return "buffer";
}

static DType fromPlan(plan::DType t) {
  switch (t) {
  case plan::F64: return DType::F64;
  case plan::F32: return DType::F32;
  case plan::BF16: return DType::BF16;
  case plan::F16: return DType::F16;
  case plan::I64: return DType::I64;
  case plan::I32: return DType::I32;
  case plan::BOOL: return DType::Bool;
  }
  return DType::F32;
}

Expected<StepPlan> StepPlan::parse(const char *bytes, int64_t size) {
  plan::Step step;
  if (!bytes || size < 0 || !step.ParseFromArray(bytes, int(size)))
    return Status::error("internal error: the program's embedded step plan is "
                         "corrupt; recompile it with sinterc");
  StepPlan result;
  result.model = step.model();
  result.phase = step.phase();
  result.optimizer = step.optimizer();
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
  return result;
}

uint64_t StepPlan::microBatch() const {
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

void BufferSet::Free::operator()(void *p) const { std::free(p); }

namespace {

// Vector loads want 64-byte alignment; aligned_alloc wants a multiple.
uint64_t aligned(uint64_t bytes) { return (std::max<uint64_t>(bytes, 1) + 63) / 64 * 64; }

} // namespace

Expected<BufferSet> BufferSet::allocate(const StepPlan &plan) {
  BufferSet set;
  set.pointers.assign(plan.buffers.size(), nullptr);
  auto allocate = [&](uint64_t size) -> void * {
    void *p = std::aligned_alloc(64, size);
    if (p) {
      std::memset(p, 0, size); // a bucket's gaps stay zero
      set.storage.emplace_back(p);
    }
    return p;
  };
  for (const GradientBucket &bucket : plan.buckets) {
    uint64_t size = 0;
    for (size_t g : bucket.gradients)
      size += aligned(plan.buffers[g].byteSize);
    auto *base = static_cast<char *>(allocate(size));
    if (!base)
      return Status::error("out of memory allocating a gradient bucket of " +
                           std::to_string(size) + " bytes");
    uint64_t at = 0;
    for (size_t g : bucket.gradients) {
      set.pointers[g] = base + at;
      at += aligned(plan.buffers[g].byteSize);
    }
    set.bucketStart.push_back(base);
    set.bucketCount.push_back(size / dtypeSize(bucket.dtype));
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    if (set.pointers[i])
      continue;
    const BufferSpec &b = plan.buffers[i];
    set.pointers[i] = allocate(aligned(b.byteSize));
    if (!set.pointers[i])
      return Status::error("out of memory allocating " +
                           std::to_string(aligned(b.byteSize)) + " bytes for '" +
                           b.name + "'");
  }
  return set;
}

} // namespace sinter::rt
